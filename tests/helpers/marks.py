"""Telling a marked picture from an unmarked one: the visible badge's corner compared with the
same corner of the original (the swap changes faces, never that corner)."""

from __future__ import annotations

import cv2
import numpy as np

from swap.mark import VisibleMark


def badge_contrast(result: np.ndarray, before: np.ndarray, mark: VisibleMark | None = None) -> tuple[float, float]:
    """Mean absolute difference result vs before inside the mark's corner, and everywhere else.
    `mark`: the style the result was marked with (None: the default style, as configured in the tests)."""
    height, width = result.shape[:2]
    x, y, w, h = (mark or VisibleMark()).region(width, height)
    diff = np.abs(result.astype(np.float32) - before.astype(np.float32)).mean(axis=2)
    inside = np.zeros(diff.shape, bool)
    inside[y : y + h, x : x + w] = True
    return float(diff[inside].mean()), float(diff[~inside].mean())


def corner_contrast(image: np.ndarray, before: np.ndarray, mark: VisibleMark | None = None) -> float:
    """badge_contrast's corner figure, `before` scaled to `image`'s size first (a preview is smaller)."""
    before = cv2.resize(before, (image.shape[1], image.shape[0]), interpolation=cv2.INTER_AREA)
    return badge_contrast(image, before, mark)[0]
