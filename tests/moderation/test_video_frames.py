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
def analysed(monkeypatch) -> list[bool]:
    """The `embed` flag of each frame the moderation analyser looks at, in order."""
    analyser = identities.get_analyser()
    calls: list[bool] = []
    analyse = analyser.faces

    def spy(image_bgr, *, embed=True, **kwargs):
        calls.append(embed)
        return analyse(image_bgr, embed=embed, **kwargs)

    monkeypatch.setattr(analyser, "faces", spy)
    return calls


def clip_frames(astronaut_rgb) -> list:
    """Two faceless frames, then three of the astronaut (BGR, as sampled from a clip)."""
    coffee = cv2.cvtColor(skdata.coffee(), cv2.COLOR_RGB2BGR)
    astronaut = cv2.cvtColor(astronaut_rgb, cv2.COLOR_RGB2BGR)
    return [coffee, coffee, astronaut, astronaut, astronaut]


def test_without_protected_identities_frames_are_looked_at_until_the_first_face(astronaut_rgb, analysed):
    subject = uuid.uuid4()
    outcome = services.screen_frames(subject_id=subject, frames=clip_frames(astronaut_rgb))
    assert outcome.decision == "allow"
    assert analysed == [False, False, False]  # up to the first face, without embeddings
    checks = CheckResult.objects.filter(verdict__in=Verdict.objects.filter(subject_id=subject))
    identity = checks.filter(check_name="identity")
    assert identity.count() == 5 and set(identity.values_list("outcome", flat=True)) == {"pass"}
    assert checks.get(check_name="face_presence").outcome == "pass"


def test_a_protected_person_in_a_later_frame_is_caught(astronaut_pair, astronaut_rgb, analysed):
    identity = ProtectedIdentity.objects.create(name="The astronaut")
    reviews.protected_identity_add_reference(identity=identity, photo=astronaut_pair[0])
    analysed.clear()  # the reference photo's own analysis
    outcome = services.screen_frames(subject_id=uuid.uuid4(), frames=clip_frames(astronaut_rgb))
    assert (outcome.decision, outcome.code) == ("reject", "protected_identity")
    assert analysed == [True, True, True]  # every frame embedded until the one that rejects


def test_a_clip_without_a_face_is_rejected(analysed):
    coffee = cv2.cvtColor(skdata.coffee(), cv2.COLOR_RGB2BGR)
    outcome = services.screen_frames(subject_id=uuid.uuid4(), frames=[coffee] * 3)
    assert (outcome.decision, outcome.code) == ("reject", "no_face_detected")
    assert analysed == [False, False, False]
