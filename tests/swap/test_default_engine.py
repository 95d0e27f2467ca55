"""The default engine as `make` installs it: MediaPipe's BlazeFace and Face Mesh (Apache-2.0),
dlib only as a fallback detector; and the commercial profile (VISAGE_ALLOW_NON_COMMERCIAL=0),
which runs fully without loading any research-only or non-commercial model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import cv2
import numpy as np
import pytest

from swap.config import PipelineConfig
from swap.errors import ModelRefused
from swap.face_analysis import FaceAnalysis, analysis_from_bytes, analysis_to_bytes
from swap.models import registry
from swap.pipeline import Pipeline
from swap.types import Face, SwapOptions
from tests.helpers.face_models import REPO


def test_mediapipe_is_the_default_detector_and_landmarker(mesh_pipeline, astronaut):
    assert mesh_pipeline.backends["detector"] == "blazeface_full_range"
    assert mesh_pipeline.backends["landmarker"] == "face_mesh_468"
    (face,) = mesh_pipeline.analyse(astronaut)
    assert face.landmarks_468.shape == (468, 3) and face.landmarks_68.shape == (68, 2)
    assert face.embedding_kind == "dlib128"


def test_a_swap_on_the_default_engine_changes_the_face_and_keeps_the_rest(
    mesh_pipeline, astronaut, other_face
):
    result = mesh_pipeline.swap_image(astronaut, other_face)
    (face,) = result.faces_used
    x1, y1, x2, y2 = face.box.astype(int)
    changed = np.abs(result.image.astype(int) - other_face.astype(int)).sum(axis=2) > 30
    assert changed[y1:y2, x1:x2].mean() > 0.2
    assert changed[: max(0, y1 - 60)].mean() < 0.01  # nothing above the face moved
    assert result.detection["found_by"].startswith("blazeface_full_range")


def test_a_tilted_face_is_found_by_an_angle_retry_or_directly(mesh_pipeline, astronaut):
    turned = cv2.rotate(astronaut, cv2.ROTATE_90_CLOCKWISE)
    report: dict = {}
    faces = mesh_pipeline.analyse(turned, embed=False, report=report)
    assert len(faces) == 1
    # The mesh's eye line follows the head: turned 90 degrees clockwise, the eyes stack vertically.
    right_eye, left_eye = faces[0].landmarks_5[:2]
    assert abs(left_eye[1] - right_eye[1]) > 3 * abs(left_eye[0] - right_eye[0])


def test_a_stored_analysis_keeps_the_mesh_bit_for_bit(mesh_pipeline, astronaut):
    faces = mesh_pipeline.analyse(astronaut)
    restored = analysis_from_bytes(analysis_to_bytes(FaceAnalysis(faces=faces))).faces
    assert np.array_equal(restored[0].landmarks_468, faces[0].landmarks_468)
    assert restored[0].mesh_presence == faces[0].mesh_presence


def test_the_record_names_every_model_with_version_and_licence(mesh_pipeline):
    used = {entry["name"]: entry for entry in mesh_pipeline.models_used()}
    assert {"blazeface_full_range", "face_mesh_468", "dlib_resnet", "dlib_hog"} <= set(used)
    assert used["face_mesh_468"]["version"] == 1 and "Apache-2.0" in used["face_mesh_468"]["licence"]
    assert "dlib_shape68" not in used and all(entry["licence"] for entry in used.values())
    # Behind BlazeFace the fallback is dlib's HOG alone (its CNN found nothing BlazeFace missed).
    assert used["dlib_hog"]["stage"] == "fallback detector" and "dlib_cnn" not in used


def test_a_false_candidate_does_not_end_the_search(mesh_pipeline, astronaut):
    """BlazeFace's candidate on a patch of sky that Face Mesh finds no face in no longer stops the
    retries: the astronaut's photo turned upside down (which the upright pass misses) is still found
    by a rotated retry."""
    detector = mesh_pipeline.detector.primary
    real_detect = detector.detect
    frame = cv2.rotate(astronaut, cv2.ROTATE_180)
    decoy = Face(
        box=np.array([0, 0, 60, 60], np.float32), score=0.7,
        landmarks_5=np.array([[15, 20], [45, 20], [30, 35], [20, 45], [40, 45]], np.float32),
    )

    def with_decoy(image, **kw):
        found = real_detect(image, **kw)
        return found + [decoy] if image is frame else found

    detector.detect = with_decoy
    try:
        report: dict = {}
        faces = mesh_pipeline.analyse(frame, embed=False, report=report)
    finally:
        del detector.detect
    assert report["tries"][0] == "blazeface_full_range" and report["found_by"].startswith("blazeface_full_range@")
    assert len(faces) == 1 and faces[0].mesh_presence > 0.9 and faces[0].box[0] > 60  # hers, not the decoy


COMMERCIAL_RUN = """
import json, cv2
from skimage import data
from swap.config import PipelineConfig
from swap.inference.sessions import model_load_counts
from swap.pipeline import Pipeline
image = cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR)
pipeline = Pipeline(PipelineConfig.from_env())
result = pipeline.swap_image(image, cv2.flip(image, 1))
print(json.dumps({"loads": model_load_counts(), "used": pipeline.models_used(), "faces": len(result.faces_used)}))
"""


def test_commercial_profile_runs_fully_and_loads_no_research_only_model(mesh_models_dir):
    # A fresh process: what it loads is what the commercial profile loads, nothing cached before.
    env = {**os.environ, "VISAGE_ALLOW_NON_COMMERCIAL": "0", "VISAGE_MODELS_DIR": str(mesh_models_dir)}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-c", COMMERCIAL_RUN],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["faces"] == 1
    loaded = set(report["loads"])
    assert {"blazeface_full_range", "face_mesh_468"} <= loaded
    assert "dlib_shape68" not in loaded
    terms = {entry["name"]: entry for entry in report["used"]}
    for name in loaded - {"dlib_resnet_onnx"}:  # dlib_resnet's ONNX conversion is dlib_resnet (CC0)
        assert name in terms and terms[name]["non_commercial"] is False, name


def test_commercial_profile_without_the_mesh_refuses_dlibs_68_point_predictor(tmp_path, monkeypatch):
    monkeypatch.setenv(registry.ALLOW_NON_COMMERCIAL_ENV, "0")
    with pytest.raises(ModelRefused, match="dlib_shape68"):
        Pipeline(PipelineConfig(models_dir=tmp_path))


def test_fast_mode_still_meshes_blazeface_faces(mesh_pipeline, astronaut):
    """BlazeFace's mouth corners are guesses: no mode aligns on them without the mesh."""
    result = mesh_pipeline.swap_image(astronaut, cv2.flip(astronaut, 1), SwapOptions(mode="fast"))
    assert result.faces_used[0].landmarks_468 is not None


def test_a_detection_the_mesh_finds_no_face_in_is_dropped(mesh_pipeline):
    """skimage's coffee cup: the retries' turned copies make BlazeFace see a face; the mesh does not."""
    from skimage import data

    cup = cv2.cvtColor(data.coffee(), cv2.COLOR_RGB2BGR)
    assert mesh_pipeline.analyse(cup, embed=False) == []
