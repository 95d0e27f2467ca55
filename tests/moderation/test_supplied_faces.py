"""screen_inputs(faces_for=...): the platform supplies each image's faces (analysed once per job);
moderation checks them instead of analysing again, and never checks faces without its own kind of
embedding."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from moderation import identities, reviews, services
from moderation.models import ProtectedIdentity

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_nsfw_model(settings):
    settings.VISAGE_NSFW_MODEL = ""


def supplier(*, embedded: bool) -> tuple[list[tuple[int, bool]], object]:
    """A `faces_for` supplying the moderation analyser's own faces (with embeddings or without) and
    the list of what it was asked: (position, embed) per image."""
    analyser = identities.get_analyser()
    asked: list[tuple[int, bool]] = []

    def faces_for(position, pixels, embed):
        asked.append((position, embed))
        return analyser.pipeline.analyse(pixels, embed=embedded)

    return asked, faces_for


def test_supplied_faces_are_checked_instead_of_analysing_again(astronaut_pair):
    source, target, _ = astronaut_pair
    analyser = identities.get_analyser()
    asked, faces_for = supplier(embedded=True)
    before = analyser.calls
    outcome = services.screen_inputs(subject_id=uuid.uuid4(), source=source, target=target, faces_for=faces_for)
    assert outcome.decision == "allow"
    assert [position for position, _ in asked] == [0, 1]  # source, then target
    assert analyser.calls == before


@pytest.fixture
def astronaut_protected(astronaut_pair):
    identity = ProtectedIdentity.objects.create(name="The astronaut")
    reviews.protected_identity_add_reference(identity=identity, photo=astronaut_pair[0])


def test_a_protected_person_is_caught_in_supplied_faces(astronaut_pair, astronaut_protected):
    source, target, _ = astronaut_pair
    analyser = identities.get_analyser()

    def supplied(position, pixels, embed):
        return analyser.pipeline.analyse(pixels, embed=True)

    before = analyser.calls
    outcome = services.screen_inputs(subject_id=uuid.uuid4(), source=source, target=target, faces_for=supplied)
    assert (outcome.decision, outcome.code) == ("reject", "protected_identity")
    assert analyser.calls == before


def test_supplied_faces_without_embeddings_are_analysed_again_not_waved_through(
    astronaut_pair, astronaut_protected
):
    source, target, _ = astronaut_pair
    analyser = identities.get_analyser()

    def without_embeddings(position, pixels, embed):
        return [replace(face, embedding=None) for face in analyser.pipeline.analyse(pixels, embed=True)]

    before = analyser.calls
    outcome = services.screen_inputs(
        subject_id=uuid.uuid4(), source=source, target=target, faces_for=without_embeddings
    )
    assert (outcome.decision, outcome.code) == ("reject", "protected_identity")
    assert analyser.calls == before + 1  # moderation analysed the source itself (and stopped there)


def test_faces_are_asked_for_embedded_only_when_a_protected_identity_exists(astronaut_pair):
    """With nobody protected, the identity check has nothing to compare a face with: supplied faces
    without embeddings are checked as they are (no second analysis, no embedding computed)."""
    source, target, _ = astronaut_pair
    analyser = identities.get_analyser()
    asked, without_embeddings = supplier(embedded=False)
    before = analyser.calls
    outcome = services.screen_inputs(
        subject_id=uuid.uuid4(), source=source, target=target, faces_for=without_embeddings
    )
    assert outcome.decision == "allow"
    assert asked == [(0, False), (1, False)]
    assert analyser.calls == before

    identity = ProtectedIdentity.objects.create(name="The astronaut")
    reviews.protected_identity_add_reference(identity=identity, photo=target)
    asked.clear()
    outcome = services.screen_inputs(
        subject_id=uuid.uuid4(), source=source, target=target, faces_for=without_embeddings
    )
    assert asked == [(0, True)]  # asked for embeddings; given none, moderation analysed the source itself
    assert (outcome.decision, outcome.code) == ("reject", "protected_identity")
