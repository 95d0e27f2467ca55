"""Provenance end to end: what a user downloads or sees is marked and signed; moderation saw it
unmarked; nothing is uploaded without the consent statement."""

from __future__ import annotations

import csv
import hashlib
import html as html_lib
import io
import json
import re

import numpy as np
import pytest
import requests
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from billing.models import LedgerEntry
from moderation.models import ModerationRecord
from swap.image_io import decode_image
from swap.video import io as video_io
from tests.helpers.images import encode
from tests.helpers.marks import badge_contrast, corner_contrast
from tests.webapp.conftest import drain, post_job
from webapp.jobs import sharing, takedowns
from webapp.jobs.models import Job, after_key_for, result_keys
from webapp.media import provenance, storage
from webapp.media.thumbnails import PREVIEW_MAX_SIDE_PX

pytestmark = pytest.mark.django_db(transaction=True)


def _succeeded(job_id) -> Job:
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    return job


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
    assert ours["engine"]["models"] == job.engine_notes["model_versions"] and ours["engine"]["version"]
    assert source not in stored and target not in stored  # a hash of the inputs, never the inputs

    body = api_a.get(f"/api/v1/jobs/{job_id}").json()
    assert body["provenance"]["manifest_present"] is True
    assert body["provenance"]["validation_state"] == "Trusted"
    assert body["provenance"]["content_id"] == str(job.id) and body["provenance"]["signer"]
    assert body["consent"]["version"] == settings.CONSENT_VERSION and body["consent"]["channel"] == "api"

    result = decode_image(stored, which="result")
    before = decode_image(storage.get_bytes(settings.S3_RESULTS_BUCKET, job.before_key), which="before")
    corner, elsewhere = badge_contrast(result, before)
    assert corner > 40 and elsewhere < 12, (corner, elsewhere)

    output = ModerationRecord.objects.get(verdict__subject_id=job.id, role="output")
    assert output.sha256 != hashlib.sha256(stored).hexdigest()  # moderation screened the unmarked image


def test_photo_output_moderation_screens_the_same_pixels_with_and_without_the_mark(api_a, astronaut_pair, settings):
    """Output screening of a photo is given the unmarked result as the worker holds it: the same
    job with and without the visible mark screens the very same pixels (same SHA-256 of the pixels,
    same size), and never the stored file (which carries the mark, labels and a signature)."""
    source, target, _ = astronaut_pair
    screened = {}
    for mark in (False, True):
        settings.MARK_ENABLED = mark
        job_id = post_job(api_a, source, target).json()["id"]
        drain()
        job = _succeeded(job_id)
        output = ModerationRecord.objects.get(verdict__subject_id=job.id, role="output")
        stored = storage.get_bytes(settings.S3_RESULTS_BUCKET, job.result_key)
        assert output.sha256 != hashlib.sha256(stored).hexdigest()
        screened[mark] = (output.sha256, output.width, output.height)
    assert screened[True] == screened[False]


def test_an_operator_can_turn_the_mark_off(api_a, astronaut_pair, settings):
    settings.MARK_ENABLED = False
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain()
    job = _succeeded(job_id)
    result = decode_image(storage.get_bytes(settings.S3_RESULTS_BUCKET, job.result_key), which="result")
    before = decode_image(storage.get_bytes(settings.S3_RESULTS_BUCKET, job.before_key), which="before")
    corner, _ = badge_contrast(result, before)
    assert corner < 12 and job.engine_notes["visible_mark"] is False


@pytest.mark.parametrize("segment_seconds", [10, 1], ids=["inline", "segmented"])
def test_every_video_frame_is_marked_and_the_mp4_is_signed(api_a, source_png, clip, settings, tmp_path, segment_seconds):
    settings.VIDEO_ENABLED = True
    settings.VIDEO_SEGMENT_MAX_SECONDS = segment_seconds
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
    corners = [badge_contrast(r, o)[0] for r, o in zip(results, originals, strict=True)]
    assert min(corners) > 30, corners  # on every frame, across segment boundaries


def _stored_image(key: str) -> np.ndarray:
    return decode_image(storage.get_bytes(settings.S3_RESULTS_BUCKET, key), which="result")


def _attribute(html: str, tag: str, attribute: str) -> str:
    """An attribute of the one element whose tag contains `tag` (e.g. 'id="download"')."""
    element = re.search(rf"<[^>]*{re.escape(tag)}[^>]*>", html)
    assert element, tag
    value = re.search(rf'\s{attribute}="([^"]*)"', element.group(0))
    assert value, (tag, attribute)
    return html_lib.unescape(value.group(1))


@pytest.mark.parametrize("fmt", ["JPEG", "PNG"])
def test_the_before_after_view_shows_the_marked_result_and_every_download_is_the_full_file(
    api_a, astronaut_pair, astronaut_rgb, funded_user, settings, fmt
):
    """A web-size JPEG result is its own "after" (no second copy stored); a PNG result's "after" is
    a JPEG copy of it, marked like it."""
    settings.SHARE_LINKS_ENABLED = True
    source, _, _ = astronaut_pair
    job_id = post_job(api_a, source, encode(np.ascontiguousarray(astronaut_rgb[:, ::-1]), fmt), resolution="original").json()["id"]
    drain()
    job = _succeeded(job_id)
    before = _stored_image(job.before_key)
    assert corner_contrast(_stored_image(job.result_key), before) > 40  # the download is marked …
    after = _stored_image(job.after_key)
    assert corner_contrast(after, before) > 40  # … and so is the compare view's "after"
    assert max(after.shape[:2]) == min(PREVIEW_MAX_SIDE_PX, max(before.shape[:2]))
    copy_stored = storage.exists(settings.S3_RESULTS_BUCKET, after_key_for(job.result_key))
    if fmt == "JPEG":
        assert job.after_key == job.result_key and not copy_stored
    else:
        assert job.after_key == after_key_for(job.result_key) and copy_stored
        assert storage.get_bytes(settings.S3_RESULTS_BUCKET, job.after_key)[:3] == b"\xff\xd8\xff"  # a JPEG

    site = Client()
    site.force_login(funded_user)
    page = site.get(f"/jobs/{job_id}/").content.decode()
    shown = _attribute(page, 'class="compare-after', "src")
    assert job.after_key in shown and requests.get(shown, timeout=10).content == storage.get_bytes(
        settings.S3_RESULTS_BUCKET, job.after_key
    )
    download = _attribute(page, 'id="download"', "href")
    assert job.result_key in download and ".after." not in download

    body = api_a.get(f"/api/v1/jobs/{job_id}").json()
    assert body["result"]["url"] == body["result_url"] and job.result_key in body["result_url"]
    assert ".after." not in json.dumps(body)  # the API gives the result itself, not the web-size copy

    _, token, _ = sharing.share_link_create(job=job)
    shared = Client().get(f"/s/{token}/").content.decode()
    assert job.result_key in _attribute(shared, 'id="download"', "href") and ".after." not in shared


def _delete_through_the_api(api, job):
    assert api.delete(f"/api/v1/jobs/{job.id}").status_code == 204


def _take_down(api, job):
    assert takedowns.job_take_down(job_id=job.id)


def _expire(api, job):
    Job.objects.filter(id=job.id).update(completed_at=job.completed_at.replace(year=job.completed_at.year - 5))
    call_command("visage_purge_results")


@pytest.mark.parametrize("delete", [_delete_through_the_api, _take_down, _expire], ids=["delete", "takedown", "retention"])
def test_everything_stored_beside_a_result_goes_with_it(api_a, astronaut_pair, delete):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain()
    job = _succeeded(job_id)
    keys = result_keys(job.result_key)
    stored = [key for key in keys if storage.exists(settings.S3_RESULTS_BUCKET, key)]
    assert stored == [job.result_key, job.before_key, job.thumbnail_key]  # a web-size JPEG is its own "after"
    delete(api_a, job)
    assert [key for key in keys if storage.exists(settings.S3_RESULTS_BUCKET, key)] == []


@pytest.mark.parametrize("segment_seconds", [10, 1], ids=["inline", "segmented"])
def test_video_output_moderation_sees_the_unmarked_frames_and_the_poster_is_marked(api_a, source_png, clip, settings,
                                                                       segment_seconds):
    """The same clip swapped with and without the mark: output moderation screened the very same
    pixels both times (had it screened the result file, the marked run's frames would differ)."""
    settings.VIDEO_ENABLED = True
    settings.VIDEO_SEGMENT_MAX_SECONDS = segment_seconds
    screened, jobs = {}, {}
    for mark in (False, True):
        settings.MARK_ENABLED = mark
        files = {"source": SimpleUploadedFile("s.png", source_png), "target": SimpleUploadedFile("c.mp4", clip),
                 "consent": "true"}
        job_id = api_a.post("/api/v1/jobs", files, format="multipart").json()["id"]
        drain()
        jobs[mark] = job = _succeeded(job_id)
        assert job.engine_notes["visible_mark"] is mark
        records = ModerationRecord.objects.filter(verdict__subject_id=job.id, verdict__stage="output").order_by("id")
        screened[mark] = [(r.role, r.sha256, r.width, r.height) for r in records]
    assert len(screened[True]) >= 8 and screened[True] == screened[False]

    marked = jobs[True]
    before = _stored_image(marked.before_key)
    assert corner_contrast(_stored_image(marked.after_key), before) > 30  # the poster frame, marked too
    assert not storage.list_keys(settings.S3_UPLOADS_BUCKET, f"{marked.owner_id}/{marked.id}/")  # kept frames too


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



def test_staff_export_who_consented_when_and_to_which_wording(api_a, astronaut_pair, funded_user, admin_client):
    source, target, _ = astronaut_pair
    job = Job.objects.get(id=post_job(api_a, source, target).json()["id"])
    response = admin_client.post("/admin/webapp/job/", {"action": "export_consent_csv", "_selected_action": [job.id]})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    header, row = list(csv.reader(io.StringIO(response.content.decode())))
    assert header[:7] == ["job_id", "created_at", "user_id", "username", "consent_at", "consent_version", "channel"]
    assert row[:4] == [str(job.id), job.created_at.isoformat(), str(funded_user.id), funded_user.username]
    assert row[4:] == [job.consent_at.isoformat(), settings.CONSENT_VERSION, "api", settings.CONSENT_TEXT]


def test_the_usage_report_exports_the_months_consent_records(api_a, astronaut_pair, admin_client):
    """Billing's usage report links the same month's consent records (one CSV per month)."""
    source, target, _ = astronaut_pair
    job = Job.objects.get(id=post_job(api_a, source, target).json()["id"])
    month = job.created_at.strftime("%Y-%m")
    page = admin_client.get(f"/admin/billing/ledgerentry/usage-report/?month={month}").content.decode()
    assert f'href="/admin/webapp/job/consent-export/?month={month}"' in page

    response = admin_client.get(f"/admin/webapp/job/consent-export/?month={month}")
    assert response["Content-Disposition"] == f'attachment; filename="consent-{month}.csv"'
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert [row[0] for row in rows[1:]] == [str(job.id)]
    other = admin_client.get("/admin/webapp/job/consent-export/?month=2001-01")
    assert list(csv.reader(io.StringIO(other.content.decode())))[1:] == []  # another month: none of them
    assert admin_client.get("/admin/webapp/job/consent-export/?month=May").status_code == 400
