"""dlib's ResNet converted to ONNX computes dlib's own descriptors, and the parser refuses other files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import cv2
import dlib
import numpy as np
import pytest

from swap import dlib_models
from swap.face_recognition.dlib_resnet import DlibResnetRecognizer, _shape
from swap.inference import clock as inference_clock
from swap.models.dlib_onnx import DlibModelFormatError, parse_resnet

# Observed on the astronaut variants: max |difference| ~3e-7, Euclidean distance ~1e-6 (float
# rounding of a different summation order). Same person is < 0.6 apart, so these are far below
# anything a threshold could notice, yet a wrong layer or weight would be orders of magnitude off.
MAX_ABS_DIFF = 2e-5
MAX_DISTANCE = 5e-5


def _dlib_descriptors(frame: np.ndarray, faces) -> np.ndarray:
    rgb = np.ascontiguousarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
    shapes = dlib.full_object_detections([_shape(f) for f in faces])
    vectors = dlib_models.resnet_recognizer().compute_face_descriptor(rgb, shapes, 0)
    return np.array([np.array(v) for v in vectors], np.float32)


def _variants(astronaut: np.ndarray) -> dict[str, np.ndarray]:
    brighter = np.clip(astronaut.astype(np.int16) + 40, 0, 255).astype(np.uint8)
    small = cv2.resize(astronaut, None, fx=0.7, fy=0.7, interpolation=cv2.INTER_AREA)
    pair = np.zeros((512, 900, 3), np.uint8)
    pair[:, :512] = astronaut
    pair[56:456, 500:900] = cv2.resize(cv2.flip(astronaut, 1), (400, 400), interpolation=cv2.INTER_AREA)
    return {
        "original": astronaut,
        "flipped": cv2.flip(astronaut, 1),
        "resized": small,
        "brighter": brighter,
        "two faces": pair,
    }


@pytest.fixture(scope="module")
def analysed(pipeline, astronaut):
    """Each variant with its faces (detected and landmarked by the pipeline, not yet embedded)."""
    return {
        name: (frame, pipeline.analyse(frame, embed=False)) for name, frame in _variants(astronaut).items()
    }


def test_onnx_descriptors_equal_dlibs(pipeline, analysed):
    assert isinstance(pipeline.recognizer, DlibResnetRecognizer)
    assert len(analysed["two faces"][1]) >= 2
    for name, (frame, faces) in analysed.items():
        assert faces, name
        ours = np.array(pipeline.recognizer.embed(frame, faces))
        reference = _dlib_descriptors(frame, faces)
        assert ours.shape == reference.shape == (len(faces), 128)
        assert np.abs(ours - reference).max() < MAX_ABS_DIFF, name
        assert np.linalg.norm(ours - reference, axis=1).max() < MAX_DISTANCE, name
        assert all(f.embedding_kind == "dlib128" for f in faces)


def test_distinct_faces_stay_distinct(pipeline, analysed):
    """Guards the tolerance above: the descriptors are not all alike, so matching dlib means something."""
    frame, faces = analysed["original"]
    other_frame, other_faces = analysed["brighter"]
    first = pipeline.recognizer.embed(frame, faces[:1])[0]
    same_person = pipeline.recognizer.embed(other_frame, other_faces[:1])[0]
    assert 1e-3 < np.linalg.norm(first - same_person) < 0.6
    assert np.linalg.norm(first) > 0.5


def test_a_batch_equals_faces_one_by_one(pipeline, analysed):
    frame, faces = analysed["two faces"]
    batched = np.array(pipeline.recognizer.embed(frame, faces))
    single = np.array([pipeline.recognizer.embed(frame, [f])[0] for f in faces])
    assert np.abs(batched - single).max() < 1e-5
    assert np.linalg.norm(batched[0] - batched[1]) > 0.01  # two different crops, two vectors


def test_the_run_is_billed_as_inference(pipeline, analysed):
    frame, faces = analysed["original"]
    with inference_clock.session() as clock:
        pipeline.recognizer.embed(frame, faces)
    assert clock.inference_ms > 0


def test_the_analysis_signature_names_the_runtime(pipeline):
    recognizer = pipeline.analysis_signature("standard")["recognizer"]
    assert recognizer["name"] == "dlib_resnet" and recognizer["embedding_kind"] == "dlib128"
    assert recognizer["runtime"][0] == "onnxruntime"
    model = Path(dlib_models.model_path(dlib_models.RESNET))
    assert recognizer["model_sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def dat_bytes() -> bytes:
    return Path(dlib_models.model_path(dlib_models.RESNET)).read_bytes()


def test_the_parser_reads_every_layer(dat_bytes):
    resnet = parse_resnet(dat_bytes)
    convs = [layer for layer in resnet.layers if layer.spec[0] == "con"]
    assert len(convs) == 29 and convs[0].weights["W"].shape == (32, 3, 7, 7)
    assert resnet.layers[-1].weights["W"].shape == (256, 128)
    np.testing.assert_allclose(resnet.channel_means, [122.782, 117.001, 104.298], atol=1e-3)


def test_the_parser_refuses_a_truncated_file(dat_bytes):
    with pytest.raises(DlibModelFormatError, match="ends early"):
        parse_resnet(dat_bytes[: len(dat_bytes) // 2])


def test_the_parser_refuses_a_garbled_file(dat_bytes):
    renamed = dat_bytes.replace(b"add_prev_", b"add_next_", 1)
    with pytest.raises(DlibModelFormatError, match="add_next_"):
        parse_resnet(renamed)
    with pytest.raises(DlibModelFormatError):
        parse_resnet(np.random.default_rng(0).bytes(4096))
    with pytest.raises(DlibModelFormatError, match="bytes after the network"):
        parse_resnet(dat_bytes + b"\x00")
