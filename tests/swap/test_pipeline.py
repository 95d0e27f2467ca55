"""Pipeline behaviour: face selection, errors, timings, backend choice and model loading."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swap import selection
from swap.config import PipelineConfig
from swap.errors import FaceIndexOutOfRange, ModelMissing, NoFaceFound
from swap.pipeline import Pipeline
from swap.types import Face, SwapOptions

STAGES = {"detect", "detect_retry", "landmarks", "embed", "swap", "enhance", "paste", "total"}


def _face(size: float, embedding=None) -> Face:
    return Face(
        box=np.array([0, 0, size, size], np.float32),
        score=1.0,
        landmarks_5=np.zeros((5, 2), np.float32),
        embedding=None if embedding is None else np.asarray(embedding, np.float32),
    )


# -- selection (pure) --------------------------------------------------------------------


def test_one_picks_the_largest_and_many_orders_largest_first():
    faces = [_face(10), _face(30), _face(20)]
    assert selection.select_faces(faces, SwapOptions(faces="one")) == [faces[1]]
    assert selection.select_faces(faces, SwapOptions(faces="many")) == [faces[1], faces[2], faces[0]]


def test_face_index_counts_largest_first_and_wins_over_the_mode():
    faces = [_face(10), _face(30), _face(20)]
    assert selection.select_faces(faces, SwapOptions(faces="many", face_index=1)) == [faces[2]]


@given(count=st.integers(0, 5), index=st.integers(-3, 10))
def test_out_of_range_index_is_a_clear_error(count, index):
    faces = [_face(10 + i) for i in range(count)]
    options = SwapOptions(face_index=index)
    if 0 <= index < count:
        assert selection.select_faces(faces, options) == [selection.by_size(faces)[index]]
    else:
        with pytest.raises(FaceIndexOutOfRange) as info:
            selection.select_faces(faces, options)
        assert f"face_index {index} is out of range" in str(info.value)


def test_reference_picks_faces_like_the_reference_face():
    alice, alice_again, bob = [1.0, 0.0, 0.1], [0.9, 0.1, 0.1], [0.0, 1.0, 0.0]
    faces = [_face(30, alice), _face(20, bob), _face(10, alice_again)]
    chosen = selection.select_faces(faces, SwapOptions(faces="reference", reference_index=0))
    assert chosen == [faces[0], faces[2]]
    chosen = selection.select_faces(faces, SwapOptions(faces="reference", reference_index=1))
    assert chosen == [faces[1]]
    # An outside reference embedding (e.g. a reference photo) works too.
    assert selection.select_faces(faces, SwapOptions(faces="reference"), reference=np.array(bob)) == [
        faces[1]
    ]
    with pytest.raises(FaceIndexOutOfRange):
        selection.select_faces(faces, SwapOptions(faces="reference", reference_index=5))


def test_embedding_distance_is_half_one_minus_cosine():
    assert selection.embedding_distance(np.array([1, 0]), np.array([2, 0])) == pytest.approx(0.0)
    assert selection.embedding_distance(np.array([1, 0]), np.array([0, 3])) == pytest.approx(0.5)
    assert selection.embedding_distance(np.array([1, 0]), np.array([-1, 0])) == pytest.approx(1.0)


# -- the pipeline on real photos ----------------------------------------------------------------


def test_swap_image_reports_stage_timings_and_inference_time(pipeline, astronaut, other_face):
    result = pipeline.swap_image(astronaut, other_face)

    assert set(result.timings_ms) == STAGES | {"source"}
    assert all(v >= 0 for v in result.timings_ms.values())
    assert result.timings_ms["paste"] > 0 and result.timings_ms["detect"] > 0
    assert 0 < result.inference_ms < result.timings_ms["total"]
    assert result.swapper == "classical" and len(result.faces_used) == 1
    # The source photo's analysis is billed work too: swap_image counts it, swap_frame alone does not.
    identity = pipeline.prepare_source([astronaut])
    # (No order between the two: the billed CPU time of onnxruntime's threads working in parallel
    # may exceed the wall time.)
    assert identity.inference_ms > 0 and identity.prepare_ms > 0
    frame_only = pipeline.swap_frame(identity, other_face)
    assert set(frame_only.timings_ms) == STAGES
    assert result.timings_ms["source"] > 0


def test_no_face_in_source_or_target(pipeline, astronaut):
    from skimage import data

    coffee = cv2.cvtColor(data.coffee(), cv2.COLOR_RGB2BGR)
    gradient = np.tile(np.linspace(0, 255, 256, dtype=np.uint8), (256, 1))
    gradient = cv2.cvtColor(gradient, cv2.COLOR_GRAY2BGR)
    with pytest.raises(NoFaceFound, match="No face was found in the source image."):
        pipeline.prepare_source([coffee])
    with pytest.raises(NoFaceFound, match="No face was found in the target image."):
        pipeline.swap_image(astronaut, gradient)


def test_several_source_photos_average_their_embeddings(pipeline, astronaut):
    moved = cv2.resize(astronaut[10:, 16:], None, fx=0.9, fy=0.9)
    one = pipeline.prepare_source([astronaut])
    both = pipeline.prepare_source([astronaut, moved])
    other = pipeline.prepare_source([moved])
    np.testing.assert_allclose(both.embedding, (one.embedding + other.embedding) / 2, atol=1e-6)
    assert both.image is astronaut


def test_hq_without_an_enhancer_is_skipped_with_a_reason(pipeline, astronaut, other_face):
    result = pipeline.swap_image(astronaut, other_face, SwapOptions(enhance=True))
    assert result.enhancer is None
    assert "no face enhancer is installed" in result.enhancer_skipped_reason


def test_reference_mode_swaps_the_matching_face(pipeline, astronaut):
    frame = np.hstack([astronaut, cv2.flip(astronaut, 1)])
    source = pipeline.prepare_source([astronaut])
    result = pipeline.swap_frame(source, frame, SwapOptions(faces="reference", reference_index=0))
    assert len(result.faces_used) == 2  # the mirrored copy is the same person
    assert result.timings_ms["embed"] > 0


def test_forced_onnx_backend_that_is_missing_names_the_model(tmp_path):
    with pytest.raises(ModelMissing, match="inswapper_128"):
        Pipeline(PipelineConfig(models_dir=tmp_path, swapper="inswapper_128"))


def test_auto_without_models_uses_dlib_and_classical(pipeline):
    assert pipeline.backends == {
        "detector": "dlib_hog",
        "landmarker": "dlib_shape68",
        "recognizer": "dlib_resnet",
        "swapper": "classical",
        "enhancer": None,
    }


def test_models_load_once_per_process(tmp_path, astronaut, other_face):
    from swap.inference.sessions import model_load_counts

    first = Pipeline(PipelineConfig(models_dir=tmp_path))
    before = model_load_counts()
    second = Pipeline(PipelineConfig(models_dir=tmp_path))
    source = second.prepare_source([astronaut])
    for _ in range(3):
        second.swap_frame(source, other_face)
    first.swap_image(astronaut, other_face)

    assert model_load_counts() == before  # building and swapping again loaded nothing
    for name in ("dlib_hog", "dlib_shape68", "dlib_resnet"):
        # 1, or 0 if another test reset the counters after the session pipeline loaded it.
        assert before.get(name, 0) <= 1


def test_config_from_env():
    cfg = PipelineConfig.from_env(
        {"VISAGE_MODELS_DIR": "/srv/models", "VISAGE_SWAPPER": "classical", "VISAGE_MAX_BATCH": "4"}
    )
    assert cfg.models_dir == Path("/srv/models") and cfg.swapper == "classical" and cfg.max_batch == 4
    with pytest.raises(ValueError, match="VISAGE_MAX_BATCH"):
        PipelineConfig.from_env({"VISAGE_MAX_BATCH": "many"})


def test_warm_up_runs_with_the_default_engine(mesh_models_dir):
    """A GPU worker warms the engine up before taking jobs; Face Mesh drops the warm-up's blank
    "face", and the recogniser must still get one to run (the worker crashed at start-up)."""
    from swap.config import PipelineConfig
    from swap.pipeline import Pipeline

    pipeline = Pipeline(PipelineConfig(models_dir=mesh_models_dir))
    assert pipeline.landmarker.name == "face_mesh_468"
    pipeline.warm_up()
