"""Joining the face to its picture: the Poisson clone is OpenCV's, the multi-band join keeps the
grain across the rim."""

from __future__ import annotations

import cv2
import numpy as np

from swap.swappers.blending import multiband, poisson, seamless_clone


def _grain(seed: int, shape=(64, 200)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(128 + rng.normal(0, 12, (*shape, 3)), 0, 255).astype(np.float32)


def _fine_energy(image: np.ndarray) -> np.ndarray:
    """Per-column std of the finest band (what the eye sees as grain)."""
    grey = image.mean(axis=2)
    fine = grey - cv2.GaussianBlur(grey, (0, 0), 1.0)
    return fine.std(axis=0)


def test_the_join_keeps_the_grain_that_a_plain_feather_flattens():
    face, picture = _grain(1), _grain(2)
    alpha = np.tile(np.clip((np.arange(200) - 70) / 60.0, 0, 1), (64, 1)).astype(np.float32)
    feathered = picture + alpha[..., None] * (face - picture)
    joined = multiband(face, picture, alpha, levels=1)

    reference = _fine_energy(picture)[:40].mean()
    middle = slice(90, 110)  # alpha about 0.5
    assert _fine_energy(feathered)[middle].mean() < 0.8 * reference  # two grains averaged: flatter
    assert _fine_energy(joined)[middle].mean() > 0.9 * reference


def test_the_join_changes_nothing_where_face_and_picture_agree():
    picture = _grain(2)
    alpha = np.tile(np.clip((np.arange(200) - 70) / 60.0, 0, 1), (64, 1)).astype(np.float32)
    joined = multiband(picture.copy(), picture, alpha, levels=2)
    assert np.abs(joined - picture).max() < 1.0


def test_the_poisson_clone_is_opencvs_seamless_clone():
    """A textured, differently lit face (an ellipse) into a picture, the rectangle's sides of lengths
    whose FFT OpenCV pads to a prime (190 + 2, 162 + 2): the sine-transform solve gives OpenCV's
    NORMAL_CLONE within 2 grey levels, mean under 1, and leaves the picture outside the rectangle."""
    rng = np.random.default_rng(4)
    picture = np.clip(cv2.GaussianBlur(rng.normal(120, 30, (260, 240, 3)), (0, 0), 3), 0, 255)
    face = np.clip(cv2.GaussianBlur(rng.normal(170, 25, (260, 240, 3)), (0, 0), 1.5), 0, 255)
    picture, face = picture.astype(np.uint8), face.astype(np.uint8)
    face[:, :, 2] = np.clip(face[:, :, 2].astype(int) + 30, 0, 255)  # a warmer face
    mask = np.zeros((260, 240), np.uint8)
    cv2.ellipse(mask, (120, 130), (81, 96), 0, 0, 360, 255, -1)
    x, y, w, h = cv2.boundingRect(mask)
    assert (w, h) == (163, 193)
    opencv = cv2.seamlessClone(face, picture, mask.copy(), (x + w // 2, y + h // 2), cv2.NORMAL_CLONE)
    ours = np.clip(np.rint(seamless_clone(face, picture, mask)), 0, 255)
    difference = np.abs(ours - opencv.astype(np.float32))
    assert difference.max() <= 2 and difference[mask > 0].mean() < 1.0
    assert np.abs(ours - face).max() > 20  # the clone did change the face (the picture's light)
    outside = np.ones_like(mask, bool)
    outside[y : y + h, x : x + w] = False
    assert np.array_equal(ours[outside], picture[outside].astype(np.float32))


def test_the_poisson_correction_joins_the_rim_and_fades_before_the_middle():
    """A face already lit as its picture, whose rim crosses darker hair along its top third (the
    picture is 40 levels lighter than the face there, equal elsewhere): the correction still meets
    the picture at the rim, but with `reach` it fades to nothing inside, where unfaded it lifted the
    face's middle by ~12 levels."""
    size = 200
    face = np.full((size, size, 3), 140, np.uint8)
    picture = face.copy()
    mask = np.zeros((size, size), np.uint8)
    cv2.circle(mask, (100, 100), 80, 255, -1)
    picture[:60] = 180  # the rim's top third: the source's hair made the face darker than its picture there
    unfaded = poisson(face, picture, mask, membrane_limit=20)
    faded = poisson(face, picture, mask, membrane_limit=20, reach=30)
    middle = np.s_[90:110, 90:110]
    assert unfaded[middle].mean() - 140 > 8
    assert abs(faded[middle].mean() - 140) < 0.5
    rim = np.s_[24:28, 95:105]  # just inside the top of the circle
    assert faded[rim].mean() - 140 > 15 and abs(faded[rim].mean() - unfaded[rim].mean()) < 6
