"""Phone photos are accepted: a 48.8 MP JPEG (decoded at a reduced size), HEIC and AVIF; bombs and
oversized photos are still refused, with the limits said in megapixels."""

from __future__ import annotations

import io
import struct

import cv2
import numpy as np
import pytest
from PIL import Image

from tests.helpers.problems import assert_problem
from tests.webapp.conftest import drain, post_job
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


def _encoded(rgb: np.ndarray, fmt: str, **options) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format=fmt, **options)
    return buffer.getvalue()


def _with_jpeg_size(jpeg: bytes, width: int, height: int) -> bytes:
    """The JPEG with its frame header claiming width×height (the data stays the small picture's)."""
    sof = jpeg.index(b"\xff\xc0")
    return jpeg[: sof + 5] + struct.pack(">HH", height, width) + jpeg[sof + 9 :]


def _swapped(api, source: bytes, target: bytes) -> Job:
    response = post_job(api, source, target)
    assert response.status_code == 201, response.content
    drain()
    job = Job.objects.get(id=response.json()["id"])
    assert job.state == "succeeded", job.error_message
    return job


@pytest.mark.parametrize(("fmt", "media_type"), [("HEIF", "image/heic"), ("AVIF", "image/avif")])
def test_a_heic_or_avif_photo_is_swapped(api_a, astronaut_pair, astronaut_rgb, fmt, media_type):
    source, _, _ = astronaut_pair
    job = _swapped(api_a, source, _encoded(astronaut_rgb[:, ::-1].copy(), fmt, quality=90))
    assert job.target.media_type == media_type and (job.target.width, job.target.height) == (512, 512)
    assert job.result_media_type == "image/jpeg"


def test_a_48_megapixel_phone_jpeg_is_swapped(api_a, astronaut_pair, astronaut_rgb):
    source, _, _ = astronaut_pair
    big = cv2.resize(astronaut_rgb[:, ::-1], (6048, 8064), interpolation=cv2.INTER_LINEAR)  # 48.8 MP
    job = _swapped(api_a, source, _encoded(big, "JPEG", quality=80))
    assert (job.target.width, job.target.height) == (6048, 8064)


def test_too_many_pixels_are_refused_in_megapixels(api_a, astronaut_pair, astronaut_rgb):
    source, _, _ = astronaut_pair
    small = _encoded(astronaut_rgb, "JPEG", quality=90)
    body = assert_problem(
        post_job(api_a, source, _with_jpeg_size(small, 17000, 13000)), 400, "image_too_large", field="target"
    )
    assert "221 MP" in body["detail"] and "200 MP for a JPEG" in body["detail"], body["detail"]
    # A PNG decodes at full size: its limit is the decoding budget.
    flat = Image.new("1", (9000, 5000))
    buffer = io.BytesIO()
    flat.save(buffer, format="PNG")
    body = assert_problem(post_job(api_a, source, buffer.getvalue()), 400, "image_too_large", field="target")
    assert "45 MP" in body["detail"] and "40 MP for other formats" in body["detail"], body["detail"]
    assert not Job.objects.exists()


def test_a_jpeg_bomb_within_the_limit_is_still_refused(api_a, astronaut_pair, astronaut_rgb):
    source, _, _ = astronaut_pair
    bomb = _with_jpeg_size(_encoded(astronaut_rgb, "JPEG", quality=90), 12000, 16000)  # 192 MP in ~30 KB
    assert_problem(post_job(api_a, source, bomb), 400, "corrupt_image", field="target")
    assert not Job.objects.exists()
