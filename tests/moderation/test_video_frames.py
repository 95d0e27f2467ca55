"""screen_frames on a video's sampled frames: every frame's faces are checked against the protected
identities; with none to compare with, only whether a face appears is left to find."""

from __future__ import annotations

import uuid

import cv2
import pytest
from skimage import data as skdata

from moderation import identities, reviews, services
from moderation.models import CheckResult, ProtectedIdentity, Verdict

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_nsfw_model(settings):
    settings.VISAGE_NSFW_MODEL = ""


@pytest.fixture
def searches(monkeypatch) -> list[tuple[bool, bool]]:
    """(embed, retries) of each frame the moderation analyser looks at, in order."""
    analyser = identities.get_analyser()
    calls: list[tuple[bool, bool]] = []
    analyse = analyser.faces

    def spy(image_bgr, *, embed=True, retries=True, **kwargs):
        calls.append((embed, retries))
        return analyse(image_bgr, embed=embed, retries=retries, **kwargs)

    monkeypatch.setattr(analyser, "faces", spy)
    return calls


def clip_frames(astronaut_rgb) -> list:
    """Two faceless frames, then three of the astronaut (BGR, as sampled from a clip)."""
    coffee = cv2.cvtColor(skdata.coffee(), cv2.COLOR_RGB2BGR)
    astronaut = cv2.cvtColor(astronaut_rgb, cv2.COLOR_RGB2BGR)
    return [coffee, coffee, astronaut, astronaut, astronaut]


def test_without_protected_identities_frames_are_looked_at_until_the_first_face(astronaut_rgb, searches):
    subject = uuid.uuid4()
    outcome = services.screen_frames(subject_id=subject, frames=clip_frames(astronaut_rgb))
    assert outcome.decision == "allow"
    assert searches == [(False, False)] * 3  # quick looks up to the first face, without embeddings
    checks = CheckResult.objects.filter(verdict__in=Verdict.objects.filter(subject_id=subject))
    identity = checks.filter(check_name="identity")
    assert identity.count() == 5 and set(identity.values_list("outcome", flat=True)) == {"pass"}
    assert checks.get(check_name="face_presence").outcome == "pass"


def test_a_protected_person_in_a_later_frame_is_caught(astronaut_pair, astronaut_rgb, searches):
    identity = ProtectedIdentity.objects.create(name="The astronaut")
    reviews.protected_identity_add_reference(identity=identity, photo=astronaut_pair[0])
    searches.clear()  # the reference photo's own analysis
    outcome = services.screen_frames(subject_id=uuid.uuid4(), frames=clip_frames(astronaut_rgb))
    assert (outcome.decision, outcome.code) == ("reject", "protected_identity")
    assert searches == [(True, True)] * 3  # every frame searched and embedded until the one that rejects


def test_a_clip_without_a_face_is_rejected(searches):
    """Each frame a quick look (no rotated retries), then the full search on up to eight of them."""
    coffee = cv2.cvtColor(skdata.coffee(), cv2.COLOR_RGB2BGR)
    outcome = services.screen_frames(subject_id=uuid.uuid4(), frames=[coffee] * 12)
    assert (outcome.decision, outcome.code) == ("reject", "no_face_detected")
    assert searches == [(False, False)] * 12 + [(False, True)] * services.FULL_SEARCH_FRAMES


def test_a_face_only_the_full_search_finds_lets_the_clip_through(astronaut_rgb, searches):
    """A clip recorded upside down: no quick look finds her, a full search (its rotated retries) does."""
    upside_down = cv2.rotate(cv2.cvtColor(astronaut_rgb, cv2.COLOR_RGB2BGR), cv2.ROTATE_180)
    outcome = services.screen_frames(subject_id=uuid.uuid4(), frames=[upside_down] * 4)
    assert outcome.decision == "allow"
    assert searches == [(False, False)] * 4 + [(False, True)]
