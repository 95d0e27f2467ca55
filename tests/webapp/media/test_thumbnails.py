"""Gallery thumbnails: card-shaped, at most 480 px, and never cutting a face off."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from webapp.media.thumbnails import THUMBNAIL_ASPECT, crop_box, thumbnail_frame


@given(
    width=st.integers(60, 4000),
    height=st.integers(60, 4000),
    fx=st.floats(0, 1),
    fy=st.floats(0, 1),
    fs=st.floats(0.02, 0.35),
)
def test_crop_is_card_shaped_and_holds_the_face(width, height, fx, fy, fs):
    side = max(2, round(fs * min(width, height)))
    x1, y1 = round(fx * (width - side)), round(fy * (height - side))
    face = (x1, y1, x1 + side, y1 + side)
    cx1, cy1, cx2, cy2 = crop_box(width, height, [face])
    assert 0 <= cx1 < cx2 <= width and 0 <= cy1 < cy2 <= height
    assert abs((cx2 - cx1) / (cy2 - cy1) - THUMBNAIL_ASPECT) < 0.05
    if side <= min(cx2 - cx1, cy2 - cy1):  # a face the window can hold is never cut
        assert cx1 <= face[0] and face[2] <= cx2 and cy1 <= face[1] and face[3] <= cy2, (face, (cx1, cy1, cx2, cy2))


@pytest.mark.parametrize("shape", [(2000, 3000), (3000, 1200), (300, 300)])
def test_thumbnail_is_small_and_card_shaped(shape):
    height, width = shape
    image = np.random.default_rng(0).integers(0, 255, (height, width, 3), dtype=np.uint8)
    thumb = thumbnail_frame(image, [(width // 2, height // 3, width // 2 + 100, height // 3 + 100)])
    assert max(thumb.shape[:2]) <= 480
    assert abs(thumb.shape[1] / thumb.shape[0] - THUMBNAIL_ASPECT) < 0.02


def test_face_at_the_edge_of_a_tall_photo_stays_in():
    # A portrait with the face at the very top: a centred crop would cut it off.
    cx1, cy1, cx2, cy2 = crop_box(1000, 3000, [(400, 0, 600, 220)])
    assert cy1 == 0 and cy2 >= 220
