"""A face analysis as bytes (swap.face_analysis), the analyser signature that decides its reuse, and
the pipeline swapping on given analyses exactly as on its own."""

from __future__ import annotations

import json

import numpy as np
import pytest

from swap import align
from swap.config import PipelineConfig
from swap.face_analysis import (
    AnalysisUnreadable,
    FaceAnalysis,
    analysis_from_bytes,
    analysis_to_bytes,
    signature_digest,
)
from swap.models import canary
from swap.models import standins as fx
from swap.pipeline import LARGEST_FACE_MODE, SOURCE_ANALYSIS_MODE, Pipeline, target_analysis_mode
from swap.types import Face, SwapOptions
from tests.helpers.standin_inputs import CPU, points_64, textured_frame


def digest(pipeline: Pipeline, mode: str = "standard") -> str:
    return signature_digest(pipeline.analysis_signature(mode))


def test_an_analysis_round_trips_bit_for_bit():
    rng = np.random.default_rng(7)
    full = Face(
        box=rng.random(4).astype(np.float32) * 500,
        score=0.987654321,
        landmarks_5=rng.random((5, 2)).astype(np.float32) * 500,
        landmarks_68=rng.random((68, 2)).astype(np.float32) * 500,
        embedding=rng.standard_normal(128).astype(np.float32),
        embedding_kind="dlib128",
        angle=-30.0,
    )
    bare = Face(box=np.float32([1, 2, 3, 4]), score=0.5, landmarks_5=np.zeros((5, 2), np.float32))
    stored = analysis_to_bytes(FaceAnalysis(faces=[full, bare], inference_ms=123.25))
    assert len(stored) < 8192  # a small object beside the upload (~1.5 KiB per face)

    back = analysis_from_bytes(stored)
    assert back.inference_ms == 123.25
    first, second = back.faces
    for name in ("box", "landmarks_5", "landmarks_68", "embedding"):
        value = getattr(first, name)
        assert value.dtype == np.float32 and value.tobytes() == getattr(full, name).tobytes(), name
    assert (first.score, first.angle, first.embedding_kind) == (full.score, full.angle, "dlib128")
    assert second.landmarks_68 is None and second.embedding is None and second.embedding_kind is None
    assert analysis_from_bytes(analysis_to_bytes(FaceAnalysis(faces=[]))).faces == []


def test_foreign_bytes_are_unreadable_not_faces():
    with pytest.raises(AnalysisUnreadable):
        analysis_from_bytes(b"not an npz at all")


def test_the_signature_names_what_decides_the_analysis(pipeline):
    signature = pipeline.analysis_signature("standard")
    assert signature["detector"]["backend"]["name"] == "dlib_hog"
    assert signature["landmarker"]["name"] == "dlib_shape68"
    assert signature["recognizer"]["embedding_kind"] == "dlib128"
    # hq and standard analyse alike; fast searches a smaller copy without retries.
    assert digest(pipeline, "hq") == digest(pipeline, "standard") != digest(pipeline, "fast")
    # A source photo's analysis keeps the largest face only: never reused as a target's.
    assert pipeline.analysis_signature(SOURCE_ANALYSIS_MODE)["detector"]["largest_only"] is True
    assert digest(pipeline, SOURCE_ANALYSIS_MODE) not in (digest(pipeline, "standard"), digest(pipeline, "fast"))

    other = Pipeline(PipelineConfig(models_dir=pipeline.config.models_dir, detect_max_side=800))
    assert digest(other) != digest(pipeline)


@pytest.fixture
def onnx_pipeline(tmp_path):
    """Generated inswapper, ArcFace, 2dfan4 and yoloface (two faces) on CPU."""
    emap = np.random.default_rng(3).standard_normal((512, 512)).astype(np.float32) * 0.01
    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap)
    fx.make_arcface(tmp_path / "arcface_w600k_r50.onnx")
    fx.make_2dfan4(tmp_path / "2dfan4.onnx", points_64(), peak=0.2)
    big = align.template_points("arcface_128", 128) * 1.5 + np.float32([60, 60])
    small = align.template_points("arcface_128", 128) + np.float32([400, 200])
    rows = [
        dict(anchor=0, cx=156, cy=156, w=192, h=192, score=0.9, kps=big),
        dict(anchor=1, cx=464, cy=264, w=128, h=128, score=0.9, kps=small),
    ]
    fx.make_yoloface(tmp_path / "yoloface_8n.onnx", fx.yoloface_table(rows), score_from_input_anchor=None)
    return Pipeline(PipelineConfig(models_dir=tmp_path, runtime=CPU, enhancer="none"))


def test_a_new_model_version_or_a_canary_changes_the_signature(onnx_pipeline):
    models_dir = onnx_pipeline.config.models_dir
    before = digest(onnx_pipeline)
    assert onnx_pipeline.analysis_signature("standard")["recognizer"]["version"] == 1
    # fast with an ONNX swapper and detector aligns on the detector's own points: no landmarker.
    assert onnx_pipeline.analysis_signature("fast")["landmarker"] is None

    (models_dir / "versions.json").write_text(json.dumps({"arcface_w600k_r50": {"stable": 2}}))
    promoted = digest(onnx_pipeline)
    assert promoted != before

    (models_dir / "versions.json").write_text(json.dumps({"arcface_w600k_r50": {"stable": 1, "canary": 2}}))
    assert digest(onnx_pipeline) == before
    with canary.job_routing("any-job", models_dir=models_dir, percent=100):
        assert digest(onnx_pipeline) == promoted  # a canary job runs (and keys) version 2


@pytest.mark.parametrize("faces", ["one", "many", "reference"])
def test_swapping_on_a_stored_analysis_is_pixel_identical(onnx_pipeline, faces, monkeypatch):
    frame = textured_frame(480, 640)
    source_photo = textured_frame(480, 640)[::-1].copy()
    options = SwapOptions(faces=faces, reference_index=1 if faces == "reference" else None)
    fresh = onnx_pipeline.swap_image(source_photo, frame, options)
    identity = onnx_pipeline.prepare_source([source_photo])

    stored_source = analysis_from_bytes(analysis_to_bytes(FaceAnalysis(identity.analyses[0])))
    stored_target = analysis_from_bytes(analysis_to_bytes(FaceAnalysis(fresh.target_faces)))
    detections = []
    original = onnx_pipeline.detector.detect
    monkeypatch.setattr(onnx_pipeline.detector, "detect", lambda image: detections.append(1) or original(image))
    again = onnx_pipeline.swap_image(
        source_photo, frame, options, source_faces=[stored_source.faces], target_faces=stored_target.faces
    )
    assert detections == []
    assert len(again.faces_used) == len(fresh.faces_used) >= 1
    assert np.array_equal(again.image, fresh.image)
    assert again.target_analysis_inference_ms == 0.0  # nothing analysed, nothing embedded again


def test_a_target_is_analysed_for_its_largest_face_only_when_only_that_one_is_swapped(pipeline):
    plans = pipeline.mode_capabilities()
    assert target_analysis_mode(SwapOptions(faces="one", mode="standard"), plans) == LARGEST_FACE_MODE
    assert target_analysis_mode(SwapOptions(faces="one", mode="hq"), plans) == LARGEST_FACE_MODE
    assert target_analysis_mode(SwapOptions(faces="one", mode="fast"), plans) == "fast"
    assert target_analysis_mode(SwapOptions(faces="many", mode="standard"), plans) == "standard"
    assert target_analysis_mode(SwapOptions(faces="reference", mode="hq"), plans) == "hq"
    assert target_analysis_mode(SwapOptions(faces="one", face_index=0), plans) == "standard"
    assert target_analysis_mode(SwapOptions(faces="one"), plans, numbered=True) == "standard"
