"""Reference matching uses the embedding kind's own "same person" line.

dlib's descriptor puts different people at cosine distance (1 - cos) / 2 of only 0.07-0.10, under
ArcFace's 0.3, so with one shared threshold reference mode swapped everyone in a group photo.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from skimage import data

from swap import selection
from swap.config import PipelineConfig
from swap.pipeline import Pipeline
from swap.types import Face, SwapOptions

SHARED_GROUP = Path(__file__).resolve().parents[3] / "shared" / "faces" / "group_1.jpg"


def _face(embedding, kind, size=100.0) -> Face:
    box = np.array([0, 0, size, size], np.float32)
    return Face(
        box=box,
        score=1.0,
        landmarks_5=np.zeros((5, 2), np.float32),
        embedding=np.asarray(embedding, np.float32),
        embedding_kind=kind,
    )


def test_dlib_embeddings_use_euclidean_distance_with_the_0_6_line():
    rng = np.random.default_rng(0)
    ref = rng.normal(0, 0.09, 128)
    near = ref + rng.normal(0, 0.4 / np.sqrt(128), 128)  # Euclidean ~0.4: the same person
    far = ref + rng.normal(0, 0.8 / np.sqrt(128), 128)  # ~0.8: someone else
    # Cosine distance alone cannot tell them apart at ArcFace's 0.3 line.
    assert selection.embedding_distance(ref, far) < 0.3
    faces = [_face(ref, "dlib128", 120), _face(near, "dlib128", 110), _face(far, "dlib128", 100)]
    chosen = selection.select_faces(faces, SwapOptions(faces="reference", reference_index=0))
    assert chosen == faces[:2]


def test_arcface_embeddings_keep_the_cosine_line():
    ref = np.zeros(512)
    ref[0] = 1
    same = ref.copy()
    same[1] = 0.9  # cos ~0.74 -> (1 - cos) / 2 ~0.13
    other = ref.copy()
    other[1] = 3  # cos ~0.32 -> ~0.34
    faces = [_face(ref, "arcface512", 120), _face(same, "arcface512", 110), _face(other, "arcface512", 100)]
    assert selection.select_faces(faces, SwapOptions(faces="reference")) == faces[:2]
    assert selection.reference_threshold("arcface512") == 0.3
    assert selection.reference_threshold("dlib128") == 0.6
    assert selection.reference_threshold("dlib128", 0.5) == 0.5  # an explicit line wins


def synthetic_group() -> np.ndarray:
    """Two different real people side by side: the astronaut (Eileen Collins) and the cameraman
    from scikit-image's public-domain images (his face mirrored, enlarged and equalised so HOG
    finds it)."""
    astronaut = cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR)[0:300, 80:380]
    cam = np.ascontiguousarray(data.camera()[100:230, 170:300][:, ::-1])
    cam = cv2.equalizeHist(cv2.resize(cam, None, fx=2.5, fy=2.5, interpolation=cv2.INTER_CUBIC))
    cam = cv2.cvtColor(cam, cv2.COLOR_GRAY2BGR)
    height = max(astronaut.shape[0], cam.shape[0])
    group = np.full((height, astronaut.shape[1] + cam.shape[1] + 20, 3), 96, np.uint8)
    group[: astronaut.shape[0], : astronaut.shape[1]] = astronaut
    group[: cam.shape[0], astronaut.shape[1] + 20 :] = cam
    return group


def _changed(before: np.ndarray, after: np.ndarray, box: np.ndarray) -> float:
    x1, y1, x2, y2 = box.astype(int)
    diff = np.abs(after[y1:y2, x1:x2].astype(int) - before[y1:y2, x1:x2]).max(axis=2)
    return float((diff > 8).mean())


@pytest.fixture(scope="module")
def group_pipeline(tmp_path_factory):
    # The cameraman's (mirrored, grey, upscaled) face scores ~0.0 with HOG, under the default 0.2.
    models_dir = Path(tmp_path_factory.mktemp("models"))
    return Pipeline(
        PipelineConfig(models_dir=models_dir, detect_score_threshold=-0.2, detect_fallback="none")
    )


def test_reference_mode_swaps_only_the_reference_person_in_a_group(group_pipeline, other_face):
    pipeline = group_pipeline
    group = synthetic_group()
    faces = pipeline.analyse(group)
    assert len(faces) == 2
    assert faces[0].embedding_kind == "dlib128"
    # Different people by dlib's own line, though "the same" by the cosine line used before.
    assert selection.face_distance(faces[0].embedding, faces[1].embedding, "dlib128") > 0.6
    assert selection.embedding_distance(faces[0].embedding, faces[1].embedding) < 0.3
    astronaut_index = int(np.argmin([f.box[0] for f in faces]))  # the left face

    source = pipeline.prepare_source([other_face])
    result = pipeline.swap_frame(
        source, group, SwapOptions(faces="reference", reference_index=astronaut_index)
    )
    assert len(result.faces_used) == 1
    assert result.faces_used[0].box[0] == faces[astronaut_index].box[0]
    other = faces[1 - astronaut_index]
    assert _changed(group, result.image, other.box) == 0.0  # the other person is untouched
    assert _changed(group, result.image, faces[astronaut_index].box) > 0.2


@pytest.mark.skipif(not SHARED_GROUP.is_file(), reason="needs ../shared/faces (local photos)")
def test_reference_mode_on_a_real_group_photo(pipeline):
    group = cv2.imread(str(SHARED_GROUP))
    faces = pipeline.analyse(group)
    assert len(faces) == 2
    source = pipeline.prepare_source([cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR)])
    for index in (0, 1):
        result = pipeline.swap_frame(source, group, SwapOptions(faces="reference", reference_index=index))
        assert len(result.faces_used) == 1
        assert _changed(group, result.image, faces[1 - index].box) == 0.0
