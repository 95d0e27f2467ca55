"""Every result a user can download carries the AI-generated label: photos in each output format,
and videos (read back from S3, as stored)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.helpers.images import encode
from tests.webapp.conftest import drain, post_job
from webapp.jobs.models import Job
from webapp.media import aigc, storage

pytestmark = pytest.mark.django_db(transaction=True)


def _stored_result(job_id) -> bytes:
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    return storage.get_bytes(settings.S3_RESULTS_BUCKET, job.result_key)


@pytest.mark.parametrize(("fmt", "media_type"), [("JPEG", "image/jpeg"), ("PNG", "image/png"), ("WEBP", "image/webp")])
def test_every_photo_result_is_labelled(api_a, astronaut_pair, astronaut_rgb, fmt, media_type):
    source, _, _ = astronaut_pair
    target = encode(astronaut_rgb[:, ::-1].copy(), fmt)
    job_id = post_job(api_a, source, target).json()["id"]
    drain()
    result = _stored_result(job_id)
    assert Job.objects.get(id=job_id).result_media_type == media_type
    assert aigc.is_labelled(result)
    assert not aigc.is_labelled(target)  # the check tells a labelled file from an unlabelled one


def test_a_video_result_is_labelled(api_a, source_png, clip, settings):
    settings.VIDEO_ENABLED = True
    files = {"source": SimpleUploadedFile("source.png", source_png), "target": SimpleUploadedFile("c.mp4", clip),
             "consent": "true"}
    job_id = api_a.post("/api/v1/jobs", files, format="multipart").json()["id"]
    drain()
    assert aigc.is_labelled(_stored_result(job_id))
    assert not aigc.is_labelled(clip)
