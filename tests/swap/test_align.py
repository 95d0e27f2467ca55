"""Alignment templates, masks and paste-back (swap.align)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from swap import align


def similarity(scale: float, angle_deg: float, shift: tuple[float, float]) -> np.ndarray:
    matrix = cv2.getRotationMatrix2D((0, 0), angle_deg, scale)
    matrix[:, 2] = shift
    return matrix


@pytest.mark.parametrize("template,size", [("arcface_112_v2", 112), ("arcface_128", 128), ("ffhq_512", 512)])
def test_estimate_matrix_maps_landmarks_onto_the_template(template, size):
    # Landmarks = template seen through a known similarity transform; the estimate must undo it.
    frame_from_crop = similarity(1.7, 20.0, (40.0, 65.0))
    landmarks = align.transform_points(align.template_points(template, size), frame_from_crop)
    matrix = align.estimate_matrix(landmarks, template, size)
    mapped = align.transform_points(landmarks, matrix)
    np.testing.assert_allclose(mapped, align.template_points(template, size), atol=1e-3)


def test_warp_face_with_integer_shift_is_an_exact_crop():
    rng = np.random.default_rng(1)
    frame = rng.integers(0, 256, (300, 300, 3), dtype=np.uint8)
    landmarks = align.template_points("arcface_128", 128) + np.float32([37, 51])
    crop, matrix = align.warp_face(frame, landmarks, "arcface_128", 128)
    np.testing.assert_allclose(matrix, [[1, 0, -37], [0, 1, -51]], atol=1e-4)
    np.testing.assert_array_equal(crop, frame[51 : 51 + 128, 37 : 37 + 128])


def test_warp_faces_batches_several_faces():
    frame = np.zeros((400, 400, 3), np.uint8)
    points = [align.template_points("arcface_128", 128) + np.float32([x, 10]) for x in (0, 100, 200)]
    crops, matrices = align.warp_faces(frame, points, "arcface_128", 128)
    assert crops.shape == (3, 128, 128, 3) and crops.dtype == np.uint8
    assert matrices.shape == (3, 2, 3)


def test_box_mask_matches_facefusion_numbers():
    mask = align.box_mask(128, blur=0.3)
    assert mask.shape == (128, 128) and mask.dtype == np.float32
    # blur_amount = int(128 * 0.5 * 0.3) = 19; border zeroed = 19 // 2 = 9, then σ = 4.75.
    reference = np.ones((128, 128), np.float32)
    reference[:9], reference[-9:], reference[:, :9], reference[:, -9:] = 0, 0, 0, 0
    reference = cv2.GaussianBlur(reference, (0, 0), 19 * 0.25)
    np.testing.assert_allclose(mask, reference, atol=1e-6)
    assert mask[64, 64] == pytest.approx(1.0, abs=1e-4)
    assert mask[0, 0] < 0.01
    np.testing.assert_allclose(mask, mask[::-1, ::-1], atol=1e-6)


def test_box_mask_without_blur_and_with_padding():
    mask = align.box_mask(100, blur=0.0, padding=(10, 0, 20, 5))
    assert set(np.unique(mask)) == {0.0, 1.0}
    rows = np.where(mask[:, 50] == 1)[0]
    cols = np.where(mask[50] == 1)[0]
    assert (rows.min(), rows.max()) == (10, 79)  # top 10 %, bottom 20 %
    assert (cols.min(), cols.max()) == (5, 98)  # left 5 %, right at least 1 px


def test_paste_back_replaces_only_under_the_mask():
    rng = np.random.default_rng(2)
    frame = rng.integers(0, 256, (200, 240, 3), dtype=np.uint8)
    matrix = np.array([[1, 0, -60], [0, 1, -30]], dtype=np.float64)  # crop at x=60, y=30
    crop = np.full((64, 64, 3), (10, 20, 30), np.uint8)
    mask = np.zeros((64, 64), np.float32)
    mask[16:48, 16:48] = 1
    result = align.paste_back(frame, crop, mask, matrix)
    assert result is not frame and result.dtype == np.uint8
    inside = result[30 + 16 : 30 + 48, 60 + 16 : 60 + 48]
    assert (inside == (10, 20, 30)).all()
    untouched = np.ones(frame.shape[:2], bool)
    untouched[30 + 16 : 30 + 48, 60 + 16 : 60 + 48] = False
    np.testing.assert_array_equal(result[untouched], frame[untouched])


def test_paste_back_blends_with_a_fractional_mask_and_clips_to_the_frame():
    frame = np.full((50, 50, 3), 100, np.uint8)
    crop = np.full((40, 40, 3), 200, np.uint8)
    mask = np.full((40, 40), 0.25, np.float32)
    matrix = np.array([[1, 0, 20], [0, 1, 20]], dtype=np.float64)  # crop half outside the frame
    result = align.paste_back(frame, crop, mask, matrix)
    assert result[10, 10].tolist() == [125, 125, 125]  # 100 · 0.75 + 200 · 0.25
    assert result[30, 30].tolist() == [100, 100, 100]  # outside the crop


def test_warp_then_paste_back_round_trips_under_rotation():
    yy, xx = np.mgrid[:300, :300]
    frame = np.dstack([xx % 256, yy % 256, (xx + yy) // 3 % 256]).astype(np.uint8)
    landmarks = align.transform_points(
        align.template_points("arcface_128", 128), similarity(1.3, 15, (80, 70))
    )
    crop, matrix = align.warp_face(frame, landmarks, "arcface_128", 128)
    result = align.paste_back(frame, crop, align.box_mask(128), matrix)
    centre = align.transform_points(np.float32([[64, 64]]), cv2.invertAffineTransform(matrix))[0].astype(int)
    window = (slice(centre[1] - 20, centre[1] + 20), slice(centre[0] - 20, centre[0] + 20))
    assert np.abs(result[window].astype(int) - frame[window].astype(int)).mean() < 3


def test_hull_mask_68_is_one_inside_and_zero_outside():
    angles = np.linspace(0, 2 * np.pi, 68, endpoint=False)
    landmarks_68 = np.stack([100 + 40 * np.cos(angles), 100 + 40 * np.sin(angles)], axis=1)
    matrix = np.array([[1, 0, -36], [0, 1, -36]], dtype=np.float64)  # 128 crop at (36, 36)
    mask = align.hull_mask_68(128, landmarks_68, matrix)
    assert mask[64, 64] == pytest.approx(1.0)
    assert mask[2, 2] == 0.0
    assert 0.0 <= mask.min() and mask.max() <= 1.0


def test_combine_masks_takes_the_minimum():
    a = np.full((4, 4), 0.8, np.float32)
    b = np.full((4, 4), 0.3, np.float32)
    np.testing.assert_allclose(align.combine_masks(a, b), 0.3)
