"""A finished job stores a gallery thumbnail beside its result (cropped around the swapped face), the
site opens its before/after on that face, and deleting the job deletes the thumbnail too."""

from __future__ import annotations

import io

import pytest
import requests
from django.conf import settings
from PIL import Image

from tests.webapp.conftest import drain, post_job
from webapp.jobs.models import Job
from webapp.media import storage
from webapp.media.thumbnails import crop_box

pytestmark = pytest.mark.django_db(transaction=True)


def test_photo_job_stores_a_face_aware_webp_thumbnail(api_a, astronaut_pair):
    source, target, (width, height) = astronaut_pair
    job_id = post_job(api_a, source, target, resolution="original").json()["id"]
    drain()
    body = api_a.get(f"/api/v1/jobs/{job_id}").json()
    assert body["state"] == "succeeded", body["error"]
    job = Job.objects.get(id=job_id)

    boxes = job.engine_notes["face_boxes"]
    assert len(boxes) == 1
    x1, y1, x2, y2 = boxes[0]
    assert 0 <= x1 < x2 <= width and 0 <= y1 < y2 <= height

    thumb = requests.get(body["result"]["thumbnail_url"], timeout=10)
    assert thumb.status_code == 200 and thumb.headers["Content-Type"] == "image/webp"
    with Image.open(io.BytesIO(thumb.content)) as image:
        assert image.format == "WEBP" and max(image.size) <= 480
    assert len(thumb.content) < job.result_bytes
    cx1, cy1, cx2, cy2 = crop_box(width, height, boxes)
    assert cx1 <= x1 and x2 <= cx2 and cy1 <= y1 and y2 <= cy2  # the face is inside the thumbnail

    assert api_a.delete(f"/api/v1/jobs/{job_id}").status_code == 204
    assert not storage.exists(settings.S3_RESULTS_BUCKET, job.thumbnail_key)
