"""The classical swapper: only the face changes, and it takes on the source's identity."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from swap.face_recognition.dlib_resnet import dlib_distance
from swap.swappers.classical import ClassicalSwapper, delaunay, face_mask


def _outside(frame_shape, faces, grow: float = 0.25) -> np.ndarray:
    """Pixels well outside every face's mask (the hull grown by `grow` x face width)."""
    near = np.zeros(frame_shape[:2], np.uint8)
    for face in faces:
        width = int(face.box[2] - face.box[0])
        k = max(3, int(grow * width)) | 1
        near |= cv2.dilate(face_mask(frame_shape, face), np.ones((k, k), np.uint8))
    return near == 0


@pytest.fixture(scope="module")
def source(pipeline, astronaut):
    return pipeline.prepare_source([astronaut])


def test_swap_changes_only_the_face(pipeline, source, other_face):
    target_faces = pipeline.analyse(other_face, embed=False)
    result = pipeline.swap_frame(source, other_face)

    assert result.image.shape == other_face.shape and result.image.dtype == np.uint8
    outside = _outside(other_face.shape, target_faces)
    assert outside.mean() > 0.5
    assert np.array_equal(result.image[outside], other_face[outside])
    inside = face_mask(other_face.shape, target_faces[0]) > 0
    changed = np.abs(result.image.astype(int) - other_face).max(axis=2)[inside]
    assert (changed > 10).mean() > 0.3  # the face region really changed


def test_swapped_face_moves_towards_the_source_identity(pipeline, source, other_face):
    before = pipeline.analyse(other_face)[0]
    result = pipeline.swap_frame(source, other_face)
    after = pipeline.analyse(result.image)[0]

    assert dlib_distance(after.embedding, source.embedding) < dlib_distance(
        before.embedding, source.embedding
    )


def test_face_cut_by_the_image_edge(pipeline, source, astronaut):
    # Crop so the face touches the left and top border.
    face = pipeline.analyse(astronaut, embed=False)[0]
    x1, y1 = int(face.box[0]) + 12, int(face.box[1]) + 6
    target = np.ascontiguousarray(astronaut[y1 : y1 + 300, x1 : x1 + 300])
    target_faces = pipeline.analyse(target, embed=False)
    assert target_faces, "the cropped face should still be found"

    result = pipeline.swap_frame(source, target)
    assert result.image.shape == target.shape
    outside = _outside(target.shape, target_faces)
    assert np.array_equal(result.image[outside], target[outside])


def test_several_faces_in_one_call(pipeline, source, astronaut):
    # Two copies side by side; "many" swaps both in one swapper call.
    frame = np.hstack([astronaut, cv2.flip(astronaut, 1)])
    calls = []
    swapper = pipeline.swapper
    original = swapper.swap

    def counting(src, img, faces, **mode_options):
        calls.append(len(faces))
        return original(src, img, faces, **mode_options)

    swapper.swap = counting
    try:
        from swap.types import SwapOptions

        result = pipeline.swap_frame(source, frame, SwapOptions(faces="many"))
    finally:
        del swapper.swap
    assert calls == [2]
    assert len(result.faces_used) == 2


def test_delaunay_covers_the_points():
    pts = np.array([[10, 10], [90, 10], [50, 80], [50, 40], [20, 60]], np.float32)
    tris = delaunay(pts, (100, 100))
    assert len(tris) == 4
    assert set(np.unique(tris)) == set(range(5))


def test_swapper_needs_landmarks(source, astronaut):
    from swap.types import Face

    face = Face(box=np.array([0, 0, 10, 10], np.float32), score=1.0, landmarks_5=np.zeros((5, 2), np.float32))
    with pytest.raises(ValueError, match="68 target landmarks"):
        ClassicalSwapper().swap(source, astronaut, [face])
