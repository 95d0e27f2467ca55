"""Gallery thumbnails: card-shaped, at most 480 px, and never cutting a face off."""

from __future__ import annotations

import io
import uuid

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image
from skimage import data as skdata

from webapp.media import aigc
from webapp.media.thumbnails import THUMBNAIL_ASPECT, crop_box, preview_frame, preview_size, thumbnail_frame


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


@pytest.mark.parametrize("size", [(4032, 3024), (1921, 1081), (2560, 1440)])
def test_a_large_photo_is_reduced_by_halves_then_by_area_as_one_area_reduction_would(size):
    """A phone photo's preview and thumbnail are first halved (fast whole 2x2 blocks), then reduced
    by area to their size: the size asked for, and the same picture as one area reduction within a
    level or so on average (no shift, no lost colour)."""
    width, height = size
    photo = cv2.resize(np.ascontiguousarray(skdata.astronaut()[:, :, ::-1]), size, interpolation=cv2.INTER_CUBIC)
    preview = preview_frame(photo)
    assert (preview.shape[1], preview.shape[0]) == preview_size(width, height)
    one_step = cv2.resize(photo, preview_size(width, height), interpolation=cv2.INTER_AREA)
    assert np.abs(preview.astype(float) - one_step).mean() < 1.0
    x1, y1, x2, y2 = crop_box(width, height, [])
    thumbnail = thumbnail_frame(photo)
    one_step = cv2.resize(photo[y1:y2, x1:x2], (thumbnail.shape[1], thumbnail.shape[0]), interpolation=cv2.INTER_AREA)
    assert max(thumbnail.shape[:2]) == 480
    assert np.abs(thumbnail.astype(float) - one_step).mean() < 1.5


def test_face_at_the_edge_of_a_tall_photo_stays_in():
    # A portrait with the face at the very top: a centred crop would cut it off.
    cx1, cy1, cx2, cy2 = crop_box(1000, 3000, [(400, 0, 600, 220)])
    assert cy1 == 0 and cy2 >= 220


def test_the_gallery_thumbnail_keeps_its_picture_at_the_quicker_webp_effort():
    """The thumbnail is WebP at quality 80 with libwebp's effort lowered (aigc.WEBP_METHOD): the
    picture a person sees stays what the default effort gives (PSNR 35.7 dB on the astronaut, 35.5
    at effort 2), within a few percent of its size."""
    frame = thumbnail_frame(cv2.resize(skdata.astronaut()[:, :, ::-1], (1280, 720)), [(520, 120, 760, 400)])
    encoded = aigc.encode_labelled(frame, fmt="webp", job_id=uuid.uuid4(), quality=80)
    with Image.open(io.BytesIO(encoded)) as image:
        assert image.format == "WEBP"
        shown = np.asarray(image.convert("RGB"))[:, :, ::-1].astype(float)
    psnr = 10 * np.log10(255**2 / np.mean((shown - frame) ** 2))
    assert psnr >= 34.5, psnr
    default_effort = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(frame[:, :, ::-1])).save(default_effort, format="WEBP", quality=80)
    assert len(encoded) <= 1.1 * len(default_effort.getvalue()) + 2048  # + the labels' metadata
