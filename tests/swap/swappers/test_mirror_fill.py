"""A turned source's foreshortened side is warped from its other side, mirrored (mirror_fill)."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from swap.face_mesh_points import MESH_LEFT_EYE, MESH_LIPS, MESH_MIRROR, MESH_RIGHT_EYE
from swap.swappers.classical import ClassicalSettings, ClassicalSwapper, mirror_fill_weights
from swap.types import SwapOptions


def test_the_mirror_map_pairs_each_mesh_point_with_its_mirror_image(mesh_pipeline, astronaut):
    assert np.array_equal(MESH_MIRROR[MESH_MIRROR], np.arange(468))
    assert set(MESH_MIRROR[MESH_RIGHT_EYE]) == set(MESH_LEFT_EYE) and set(MESH_MIRROR[MESH_LIPS]) == set(MESH_LIPS)
    (face,) = mesh_pipeline.analyse(astronaut, embed=False)
    (flipped,) = mesh_pipeline.analyse(np.ascontiguousarray(astronaut[:, ::-1]), embed=False)
    points = face.landmarks_468[:, :2]
    mirrored = flipped.landmarks_468[:, :2].copy()
    mirrored[:, 0] = astronaut.shape[1] - 1 - mirrored[:, 0]
    size = float(np.linalg.norm(points.max(0) - points.min(0)))
    # The mesh of the mirrored photo, mirrored back, puts each point where its mirror image was.
    assert np.median(np.linalg.norm(mirrored[MESH_MIRROR] - points, axis=1)) < 0.015 * size


def squeezed(image: np.ndarray, x_mid: float, factor: float) -> np.ndarray:
    """`image` with everything right of `x_mid` (the subject's left half of the face, on the
    viewer's right) squeezed horizontally by `factor` towards it: a side seen foreshortened."""
    h, w = image.shape[:2]
    xs = np.arange(w, dtype=np.float32)
    source_x = np.where(xs > x_mid, x_mid + (xs - x_mid) / factor, xs)
    map_x = np.repeat(source_x[None, :], h, axis=0)
    map_y = np.repeat(np.arange(h, dtype=np.float32)[:, None], w, axis=1)
    return cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


@pytest.fixture(scope="module")
def turned(mesh_pipeline, astronaut):
    """The astronaut with the viewer's right half of her face squeezed to 45 %, and its mesh."""
    (face,) = mesh_pipeline.analyse(astronaut, embed=False)
    x_mid = float(face.landmarks_468[1, 0])  # the nose tip
    image = squeezed(astronaut, x_mid, 0.45)
    (squeezed_face,) = mesh_pipeline.analyse(image, embed=False)
    return image, squeezed_face, x_mid


def test_only_the_foreshortened_side_below_the_nose_is_filled_and_not_its_features(
    mesh_pipeline, astronaut, turned
):
    (face,) = mesh_pipeline.analyse(astronaut, embed=False)
    frontal = mirror_fill_weights(astronaut.shape, face.landmarks_468[:, :2], 1.3)
    image, squeezed_face, x_mid = turned
    mesh = squeezed_face.landmarks_468[:, :2]
    weights = mirror_fill_weights(image.shape, mesh, 1.3)
    assert weights is not None and weights.max() > 0.6
    assert frontal is None  # her own photo is frontal: nothing to fill
    ys, xs = np.nonzero(weights > 0.5)
    assert (xs > x_mid).all()  # the squeezed side only
    assert (ys > mesh[1, 1]).all()  # below the nose tip
    lips = np.zeros(image.shape[:2], np.uint8)
    cv2.fillConvexPoly(lips, cv2.convexHull(np.round(mesh[MESH_LIPS]).astype(np.int32)), 255)
    assert weights[lips > 0].max() < 0.05


def test_the_fill_changes_the_result_on_the_squeezed_side_only(mesh_pipeline, turned, other_face):
    """Swapped onto another picture of her, the fill changes the side that is squeezed in the
    source, below the nose, and leaves the rest of the result as it was."""
    image, source_face, x_mid = turned
    (target_face,) = mesh_pipeline.analyse(other_face, embed=False)
    results = {}
    swapper = mesh_pipeline.swapper
    kept = swapper.settings
    for fill in (1.3, 0.0):
        swapper.settings = dataclasses.replace(kept, mirror_fill=fill)
        try:
            identity = mesh_pipeline.prepare_source([image])
            results[fill] = mesh_pipeline.swap_frame(identity, other_face, SwapOptions(mode="standard")).image
        finally:
            swapper.settings = kept
    changed = np.abs(results[1.3].astype(int) - results[0.0]).max(axis=2) > 8
    assert changed.sum() > 200
    # A cheek point on the squeezed side of the source, and where that cheek is in the target.
    cheek = 425 if source_face.landmarks_468[425, 0] > x_mid else 205
    target = target_face.landmarks_468[:, :2]
    ys, xs = np.nonzero(changed)
    on_that_side = np.sign(xs - target[1, 0]) == np.sign(target[cheek, 0] - target[1, 0])
    assert on_that_side.mean() > 0.9
    assert (ys > target[1, 1] - 0.05 * np.ptp(target[:, 1])).mean() > 0.9


def test_mirror_fill_is_on_by_default_and_off_at_zero():
    assert ClassicalSettings().mirror_fill > 0
    assert ClassicalSwapper(ClassicalSettings(mirror_fill=0)).settings.mirror_fill == 0
