"""A turned source's foreshortened side is warped from its other side, mirrored (mirror_fill)."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from swap.face_mesh_points import (
    MESH_LEFT_BROW,
    MESH_LEFT_EYE,
    MESH_LIPS,
    MESH_MIRROR,
    MESH_RIGHT_BROW,
    MESH_RIGHT_EYE,
)
from swap.swappers.classical import (
    MIRROR_FILL_SPAN,
    NOSE_TIP,
    ClassicalSettings,
    ClassicalSwapper,
    _disk,
    delaunay,
    mirror_fill_weights,
)
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


def _whole_photo_weights(image_shape, mesh: np.ndarray, start: float) -> np.ndarray | None:
    """mirror_fill_weights as it was written before 2026-12-06: drawn and feathered over the whole
    photo (the box round the mesh must give exactly this)."""
    h, w = image_shape[:2]
    tris = delaunay(mesh, (w, h))

    def areas(triangles):
        a, b, c = mesh[triangles[:, 0]], mesh[triangles[:, 1]], mesh[triangles[:, 2]]
        return 0.5 * np.abs((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1]))

    weight = np.clip((areas(MESH_MIRROR[tris]) / np.maximum(areas(tris), 1e-6) - start) / MIRROR_FILL_SPAN, 0.0, 1.0)
    up = (mesh[33] + mesh[263]) / 2 - (mesh[61] + mesh[291]) / 2
    weight[(mesh[tris].mean(axis=1) - mesh[NOSE_TIP]) @ (up / max(float(np.linalg.norm(up)), 1e-6)) > 0] = 0.0
    weights = np.zeros((h, w), np.float32)
    for tri in np.flatnonzero(weight > 0):
        cv2.fillConvexPoly(weights, np.round(mesh[tris[tri]]).astype(np.int32), float(weight[tri]))
    size = float(np.linalg.norm(mesh.max(0) - mesh.min(0))) / np.sqrt(2)
    features = np.zeros((h, w), np.uint8)
    for part in (MESH_LIPS, MESH_RIGHT_EYE, MESH_LEFT_EYE, MESH_RIGHT_BROW, MESH_LEFT_BROW):
        cv2.fillConvexPoly(features, cv2.convexHull(np.round(mesh[part]).astype(np.int32)), 255)
    weights[cv2.dilate(features, _disk(0.04 * size)) > 0] = 0.0
    weights = cv2.GaussianBlur(weights, (0, 0), max(1.0, 0.03 * size))
    weights[features > 0] = 0.0
    return weights if weights.max() >= 0.1 else None


@pytest.mark.parametrize("scale", [1.0, 2.5])
@pytest.mark.parametrize("placed", ["middle", "corner"])
def test_the_weights_drawn_in_a_box_round_the_mesh_equal_those_drawn_over_the_whole_photo(turned, scale, placed):
    image, face, _ = turned
    mesh = face.landmarks_468[:, :2].astype(np.float64) * scale
    shape = (round(image.shape[0] * scale), round(image.shape[1] * scale))
    if placed == "corner":  # the photo cut close to the face: the box meets the photo's edges
        mesh = mesh - (mesh.min(axis=0) - 3)
        shape = (int(mesh[:, 1].max()) + 5, int(mesh[:, 0].max()) + 5)
    else:  # odd offsets: the box's corner is moved to even pixels
        mesh = mesh + [101.5, 57.25]
        shape = (shape[0] + 300, shape[1] + 301)
    boxed, whole = mirror_fill_weights(shape, mesh, 1.3), _whole_photo_weights(shape, mesh, 1.3)
    assert whole is not None and boxed is not None
    np.testing.assert_array_equal(boxed, whole)
