"""Provenance end to end: what a user downloads is marked and signed; moderation saw it unmarked;
nothing is uploaded without the consent statement."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from billing.models import LedgerEntry
from moderation.models import ModerationRecord
from swap.image_io import decode_image
from swap.mark import VisibleMark
from swap.video import io as video_io
from tests.webapp.conftest import drain, encode, post_job
from webapp.jobs.models import Job
from webapp.media import provenance, storage

pytestmark = pytest.mark.django_db(transaction=True)


def _succeeded(job_id) -> Job:
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    return job


def _badge_contrast(result: np.ndarray, before: np.ndarray) -> tuple[float, float]:
    """Mean absolute difference result vs before inside the mark's corner, and everywhere else."""
    height, width = result.shape[:2]
    x, y, w, h = VisibleMark().region(width, height)  # the default style, as configured in the tests
    diff = np.abs(result.astype(np.float32) - before.astype(np.float32)).mean(axis=2)
    inside = np.zeros(diff.shape, bool)
    inside[y : y + h, x : x + w] = True
    return float(diff[inside].mean()), float(diff[~inside].mean())


@pytest.mark.parametrize(("fmt", "media_type"), [("JPEG", "image/jpeg"), ("PNG", "image/png"), ("WEBP", "image/webp")])
def test_a_photo_result_is_marked_signed_and_was_screened_unmarked(api_a, astronaut_pair, astronaut_rgb, fmt, media_type):
    source, _, _ = astronaut_pair
    target = encode(astronaut_rgb[:, ::-1].copy(), fmt)
    job_id = post_job(api_a, source, target).json()["id"]
    drain()
    job = _succeeded(job_id)
    stored = storage.get_bytes(settings.S3_RESULTS_BUCKET, job.result_key)

    credentials = provenance.read(stored, media_type=media_type)
    assert credentials.validation_state == "Trusted", credentials.failures
    ours = credentials.assertions[provenance.ASSERTION_LABEL]
    uploads = [job.source, *job.extra_sources.all(), job.target]
    assert ours["content_id"] == str(job.id)
    assert ours["inputs_sha256"] == provenance.inputs_digest([u.sha256 for u in uploads])
    assert ours["engine"]["swapper"] == job.engine_notes["swapper"]
    assert source not in stored and target not in stored  # a hash of the inputs, never the inputs

    body = api_a.get(f"/api/v1/jobs/{job_id}").json()
    assert body["provenance"]["manifest_present"] is True
    assert body["provenance"]["validation_state"] == "Trusted"
    assert body["provenance"]["content_id"] == str(job.id) and body["provenance"]["signer"]
    assert body["consent"]["version"] == settings.CONSENT_VERSION and body["consent"]["channel"] == "api"

    result = decode_image(stored, which="result")
    before = decode_image(storage.get_bytes(settings.S3_RESULTS_BUCKET, job.before_key), which="before")
    corner, elsewhere = _badge_contrast(result, before)
    assert corner > 40 and elsewhere < 12, (corner, elsewhere)

    output = ModerationRecord.objects.get(verdict__subject_id=job.id, role="output")
    assert output.sha256 != hashlib.sha256(stored).hexdigest()  # moderation screened the unmarked image


def test_an_operator_can_turn_the_mark_off(api_a, astronaut_pair, settings):
    settings.MARK_ENABLED = False
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain()
    job = _succeeded(job_id)
    result = decode_image(storage.get_bytes(settings.S3_RESULTS_BUCKET, job.result_key), which="result")
    before = decode_image(storage.get_bytes(settings.S3_RESULTS_BUCKET, job.before_key), which="before")
    corner, _ = _badge_contrast(result, before)
    assert corner < 12 and job.engine_notes["visible_mark"] is False


@pytest.mark.parametrize("segment_seconds", [10, 1], ids=["inline", "segmented"])
def test_every_video_frame_is_marked_and_the_mp4_is_signed(api_a, source_png, clip, settings, tmp_path, segment_seconds):
    settings.VIDEO_ENABLED = True
    settings.VIDEO_SEGMENT_SECONDS = segment_seconds
    files = {"source": SimpleUploadedFile("s.png", source_png), "target": SimpleUploadedFile("c.mp4", clip),
             "consent": "true"}
    job_id = api_a.post("/api/v1/jobs", files, format="multipart").json()["id"]
    drain()
    job = _succeeded(job_id)
    assert job.engine_notes["segments"] == (1 if segment_seconds == 10 else 2)
    result_path = tmp_path / "result.mp4"
    result_path.write_bytes(storage.get_bytes(settings.S3_RESULTS_BUCKET, job.result_key))
    target_path = tmp_path / "target.mp4"
    target_path.write_bytes(clip)

    credentials = provenance.read(result_path, media_type="video/mp4")
    assert credentials.validation_state == "Trusted", credentials.failures
    assert credentials.assertions[provenance.ASSERTION_LABEL]["content_id"] == str(job.id)
    assert job.provenance["validation_state"] == "Trusted"

    size = (job.processed_width, job.processed_height)
    results = list(video_io.read_frames(result_path, size=size))
    originals = list(video_io.read_frames(target_path, size=size))
    assert len(results) == len(originals) == job.frames_processed
    corners = [_badge_contrast(r, o)[0] for r, o in zip(results, originals, strict=True)]
    assert min(corners) > 30, corners  # on every frame, across segment boundaries


def _no_trace_of_a_job(user) -> None:
    assert not Job.objects.exists()
    assert not storage.list_keys(settings.S3_UPLOADS_BUCKET)
    assert not LedgerEntry.objects.filter(account__user=user).exclude(kind="top_up").exists()


@pytest.mark.parametrize("consent", [None, "false"], ids=["missing", "false"])
def test_the_api_refuses_an_upload_without_consent(api_a, astronaut_pair, funded_user, consent):
    source, target, _ = astronaut_pair
    response = post_job(api_a, source, target, consent=consent)
    assert response.status_code == 422, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["code"] == "consent_required"
    assert "right to use the face" in body["detail"] and body["errors"]["consent"]
    _no_trace_of_a_job(funded_user)


def test_consent_is_recorded_with_the_wording_version(api_a, astronaut_pair, funded_user, settings):
    settings.CONSENT_TEXT, settings.CONSENT_VERSION = "These are my own photos.", "2026-12-a"
    source, target, _ = astronaut_pair
    job = Job.objects.get(id=post_job(api_a, source, target).json()["id"])
    assert job.owner == funded_user and job.consent_at is not None
    assert (job.consent_version, job.consent_text, job.consent_channel) == (
        "2026-12-a", "These are my own photos.", "api"
    )

