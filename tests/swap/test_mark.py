"""The visible AI mark: present in the corner (pixel statistics), legible on light and dark, nowhere else."""

from __future__ import annotations

import numpy as np
import pytest
from skimage import data as skdata

from swap.mark import MarkStyle, VisibleMark


def luma(image: np.ndarray) -> np.ndarray:
    return image.astype(np.float32) @ np.array([0.114, 0.587, 0.299], dtype=np.float32)


@pytest.mark.parametrize("value", [0, 40, 128, 220, 255])
def test_the_badge_reads_on_any_flat_background(value):
    frame = np.full((480, 640, 3), value, np.uint8)
    mark = VisibleMark()
    marked = mark.apply(frame)
    x, y, w, h = mark.region(640, 480)
    badge = luma(marked[y : y + h, x : x + w])
    # Contrast-adaptive: the plate moves away from the background, the text away from the plate.
    plate = np.median(badge)
    assert abs(plate - value) > 60, (plate, value)
    text_share = np.mean(np.abs(badge - plate) > 100)
    assert 0.05 < text_share < 0.6, text_share  # glyph strokes, not a solid block
    outside = np.ones(marked.shape[:2], bool)
    outside[y : y + h, x : x + w] = False
    assert np.array_equal(marked[outside], frame[outside])  # nothing else changes
    assert np.array_equal(frame, np.full_like(frame, value))  # the input is untouched


def test_badge_size_and_corner_follow_the_style():
    mark = VisibleMark(MarkStyle(height_fraction=0.10, position="bottom-right"))
    x, y, w, h = mark.region(1280, 720)
    assert h == 72  # 10 % of the shorter side
    assert x + w <= 1280 and y + h <= 720 and x > 640 and y > 360
    x, y, w, h = VisibleMark(MarkStyle(position="top-left")).region(1280, 720)
    assert x < 100 and y < 100


def test_the_mark_is_found_by_corner_statistics_on_a_photo():
    photo = skdata.astronaut()[:, :, ::-1].copy()
    mark = VisibleMark()
    marked = mark.apply(photo)
    x, y, w, h = mark.region(*photo.shape[1::-1])
    corner = np.abs(luma(marked[y : y + h, x : x + w]) - luma(photo[y : y + h, x : x + w]))
    opposite = np.abs(luma(marked[:h, :w]) - luma(photo[:h, :w]))
    assert corner.mean() > 40 and opposite.mean() == 0


def test_a_narrow_frame_still_gets_a_whole_badge():
    frame = np.zeros((600, 120, 3), np.uint8)
    mark = VisibleMark()
    x, y, w, h = mark.region(120, 600)
    assert 0 <= x and x + w <= 120 and h >= 2
    assert np.abs(luma(mark.apply(frame)[y : y + h, x : x + w])).mean() > 60


def test_bad_styles_are_refused():
    with pytest.raises(ValueError):
        MarkStyle(position="middle")
    with pytest.raises(ValueError):
        MarkStyle(text=" ")
