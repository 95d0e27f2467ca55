"""Joining the face to its picture: the multi-band join keeps the grain across the rim."""

from __future__ import annotations

import cv2
import numpy as np

from swap.swappers.blending import multiband


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
