"""The NSFW detector: the real NudeNet model from the wheel, and threshold logic on generated models."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from moderation import nsfw
from swap.inference.sessions import model_load_counts


@pytest.fixture
def bgr(astronaut_rgb) -> np.ndarray:
    return np.ascontiguousarray(astronaut_rgb[:, :, ::-1])


def test_real_model_loads_from_the_wheel_and_passes_the_astronaut(bgr, settings):
    settings.VISAGE_NSFW_MODEL = ""
    loads_before = model_load_counts().get("320n", 0)  # an earlier test may have loaded it already
    finding = nsfw.check(bgr, role="source")
    assert finding.outcome == "pass"
    assert finding.detail["fired"] == {}
    assert nsfw.get_detector().model_path.name == "320n.onnx"
    loads_after_first = model_load_counts().get("320n", 0)
    # Loaded through swap.inference.sessions.get_session, at most once per session: one picture on
    # the calling thread, batches on onnxruntime's pool.
    assert loads_after_first - loads_before <= 2
    nsfw.check(bgr, role="target")
    assert model_load_counts().get("320n", 0) == loads_after_first  # and never again for the next image


def test_one_picture_alone_is_detected_as_in_a_batch(bgr, settings):
    """A lone picture runs on the one-thread session, a batch on the pool's: the same model, the
    same detections."""
    settings.VISAGE_NSFW_MODEL = ""
    detector = nsfw.get_detector()
    assert detector.one_picture_session is not detector.session
    alone = detector.detect(bgr)
    in_a_batch = detector.detect_many([np.ascontiguousarray(bgr[:, ::-1]), bgr])[1]
    assert alone and [(d.label, round(d.score, 4), d.box) for d in alone] == [
        (d.label, round(d.score, 4), d.box) for d in in_a_batch
    ]


@pytest.mark.parametrize(
    ("height", "width"),
    [(720, 1280), (1080, 1920), (3024, 4032), (4032, 3024), (719, 1279), (1279, 719), (1000, 1000), (321, 322),
     (320, 200), (77, 123), (2000, 1501), (4000, 3000), (1536, 2048), (997, 1409), (641, 359)],
)
def test_preprocessing_without_the_square_equals_nudenets_padded_square_bit_for_bit(height, width):
    rng = np.random.default_rng(height * 10007 + width)
    picture = rng.integers(0, 256, (height, width, 4), dtype=np.uint8)
    for image in (picture[:, :, :3].copy(), picture, picture[:, ::-1, :3]):  # BGR, BGRA, a strided view
        ours, square = nsfw.preprocess(image), nsfw.square_preprocess(image)
        assert ours.shape == square.shape == (1, 3, nsfw.INPUT_SIZE, nsfw.INPUT_SIZE)
        assert ours.dtype == square.dtype == np.float32
        np.testing.assert_array_equal(ours, square)


def test_our_decoding_matches_nudenet_itself(bgr):
    from nudenet import NudeDetector

    ours = nsfw.NsfwDetector(nsfw.conf.nsfw_model_path()).detect(bgr)
    theirs = NudeDetector().detect(bgr)
    assert [(d.label, round(d.score, 4), d.box) for d in ours] == [
        (d["class"], round(d["score"], 4), tuple(d["box"])) for d in theirs
    ]
    assert any(d.label == "FACE_FEMALE" for d in ours)


def test_generated_model_decodes_to_the_boxes_it_was_built_with(bgr, nsfw_models, settings):
    settings.VISAGE_NSFW_MODEL = str(nsfw_models["reject"])
    detections = nsfw.get_detector().detect(bgr)
    assert sorted((d.label, round(d.score, 2)) for d in detections) == [
        ("FACE_FEMALE", 0.8),
        ("FEMALE_GENITALIA_EXPOSED", 0.91),
    ]


@pytest.mark.parametrize(
    ("model", "outcome", "fired"),
    [
        ("reject", "reject", {"FEMALE_GENITALIA_EXPOSED"}),
        ("review", "review", {"FEMALE_BREAST_EXPOSED"}),
        ("clean", "pass", set()),
    ],
)
def test_per_class_thresholds_and_review_band(bgr, nsfw_models, settings, model, outcome, fired):
    settings.VISAGE_NSFW_MODEL = str(nsfw_models[model])
    finding = nsfw.check(bgr, role="target")
    assert finding.outcome == outcome
    assert set(finding.detail["fired"]) == fired
    if fired:
        (label,) = fired
        assert finding.detail["fired"][label]["score"] == pytest.approx(finding.score)
        assert finding.score >= finding.threshold
    assert finding.code == ("content_rejected" if outcome == "reject" else "")


def test_thresholds_are_configurable(bgr, nsfw_models, settings):
    settings.VISAGE_NSFW_MODEL = str(nsfw_models["review"])
    settings.VISAGE_NSFW_THRESHOLDS = {"FEMALE_BREAST_EXPOSED": [0.2, 0.4]}
    assert nsfw.check(bgr, role="target").outcome == "reject"
    settings.VISAGE_NSFW_THRESHOLDS = {"FEMALE_BREAST_EXPOSED": [0.5, 0.9]}
    assert nsfw.check(bgr, role="target").outcome == "pass"


def test_a_batch_gives_each_image_what_a_run_of_its_own_gives(bgr, settings):
    settings.VISAGE_NSFW_MODEL = ""
    detector = nsfw.get_detector()
    other = np.ascontiguousarray(bgr[::2, ::-1])  # a different size and content
    alone = [detector.detect(bgr), detector.detect(other)]
    calls = detector.calls
    together = detector.detect_many([bgr, other])
    assert detector.calls == calls + 1  # one session run for both
    assert [[(d.label, round(d.score, 4), d.box) for d in found] for found in together] == [
        [(d.label, round(d.score, 4), d.box) for d in found] for found in alone
    ]
    assert any(d.label == "FACE_FEMALE" for d in together[0])


def test_check_many_keeps_a_finding_per_image(bgr, nsfw_models, settings):
    settings.VISAGE_NSFW_MODEL = str(nsfw_models["reject"])
    findings = nsfw.check_many([bgr, bgr[:100]], roles=["source", "target"])
    assert [(f.role, f.outcome, f.code) for f in findings] == [
        ("source", "reject", "content_rejected"),
        ("target", "reject", "content_rejected"),
    ]
    assert len(nsfw.get_detector().detect_many([bgr] * (nsfw.MAX_BATCH + 1))) == nsfw.MAX_BATCH + 1


def test_a_photo_is_detected_once_per_model_and_its_thresholds_apply_afresh(bgr, nsfw_models, settings, monkeypatch):
    """The same uploaded bytes (SHA-256) again: the detector is not run for them, their findings
    come from the remembered detections under today's thresholds; another model file runs anew."""
    settings.VISAGE_NSFW_MODEL = str(nsfw_models["review"])
    runs: list[int] = []
    real = nsfw.NsfwDetector.detect_many
    monkeypatch.setattr(nsfw.NsfwDetector, "detect_many", lambda self, images: runs.append(len(images)) or real(self, images))
    photo = uuid.uuid4().hex  # this test's own photo: nothing remembered from another test
    first = nsfw.check_many([bgr], roles=["source"], sha256s=[photo])
    again = nsfw.check_many([bgr, bgr[:100]], roles=["source", "target"], sha256s=[photo, None])
    assert runs == [1, 1]  # the second run had only the target in it
    assert first[0].outcome == again[0].outcome == "review" and again[0].detail["reused"] is True
    assert again[0].score == first[0].score and "reused" not in again[1].detail

    settings.VISAGE_NSFW_THRESHOLDS = {"FEMALE_BREAST_EXPOSED": [0.2, 0.4]}  # stricter: now a reject
    assert nsfw.check_many([bgr], roles=["source"], sha256s=[photo])[0].outcome == "reject"
    assert runs == [1, 1]

    settings.VISAGE_NSFW_MODEL = str(nsfw_models["clean"])  # a different model file: detected anew
    assert nsfw.check_many([bgr], roles=["source"], sha256s=[photo])[0].outcome == "pass"
    assert runs == [1, 1, 1]
