"""Edges of the API contract a mobile app meets: answers the schema must list, an ETag per language,
Last-Event-ID values Redis cannot take, and what moderation says of a job that never reached it."""

from __future__ import annotations

import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.helpers import sse
from tests.helpers.direct_uploads import start_upload
from tests.helpers.openapi import assert_conforms
from tests.webapp.conftest import post_job
from webapp.jobs.services import lifecycle

pytestmark = pytest.mark.django_db(transaction=True)


# POST /api/v1/jobs answers 404 upload_not_found and 409 upload_not_ready: the schema lists both.
def test_create_with_an_unknown_target_upload_is_a_documented_answer(api_a, astronaut_pair):
    source, _, _ = astronaut_pair
    response = api_a.post(
        "/api/v1/jobs",
        {"source": SimpleUploadedFile("s.png", source), "target_upload": str(uuid.uuid4()), "consent": "true"},
        format="multipart",
    )
    assert response.status_code == 404 and response.json()["code"] == "upload_not_found"
    assert_conforms(response, method="POST")


def test_create_with_a_pending_target_upload_is_a_documented_answer(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    upload = start_upload(api_a, target, kind="image", content_type="image/jpeg").json()
    response = api_a.post(
        "/api/v1/jobs",
        {"source": SimpleUploadedFile("s.png", source), "target_upload": upload["id"], "consent": "true"},
        format="multipart",
    )
    assert response.status_code == 409 and response.json()["code"] == "upload_not_ready"
    assert_conforms(response, method="POST")


# The body depends on Accept-Language (Vary says so), so the strong ETag does too.
def test_the_etag_differs_between_languages(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    zh = api_a.get(f"/api/v1/jobs/{job_id}", HTTP_ACCEPT_LANGUAGE="zh-Hans")
    en = api_a.get(f"/api/v1/jobs/{job_id}", HTTP_ACCEPT_LANGUAGE="en")
    assert zh.json()["credits"] != en.json()["credits"] and "Accept-Language" in zh["Vary"]
    again = api_a.get(f"/api/v1/jobs/{job_id}", HTTP_ACCEPT_LANGUAGE="en", HTTP_IF_NONE_MATCH=zh["ETag"])
    assert again.status_code == 200  # not the Chinese sentences' 304


# A Last-Event-ID Redis could never have given.
@pytest.mark.parametrize("last_event_id", ["99999999999999999999", "1-99999999999999999999"])
def test_an_out_of_range_last_event_id_is_a_400(api_a, last_event_id, settings):
    settings.EVENTS_STREAM_MAX_S = 1.0
    response = api_a.get("/api/v1/jobs/events", HTTP_LAST_EVENT_ID=last_event_id)
    body = b"".join(sse.chunks(response)) if response.status_code == 200 else response.content
    # Redis refused it: the stream ended at once and EventSource reconnected with it every 3 s, for ever.
    assert response.status_code == 400, body


def test_a_last_event_id_from_the_future_resets_the_client(api_a, astronaut_pair, settings):
    settings.EVENTS_STREAM_MAX_S = 1.0
    source, target, _ = astronaut_pair
    post_job(api_a, source, target)  # the stream has an event
    response = api_a.get("/api/v1/jobs/events", HTTP_LAST_EVENT_ID="9999999999999-0")  # year 2286
    body = b"".join(sse.chunks(response)) if response.status_code == 200 else response.content
    # No event is ever newer than this id: the stream sent keep-alives only, for ever.
    assert response.status_code == 400 or b"event: reset" in body, body


# A job that failed before it was ever screened was not passed by moderation.
def test_a_job_failed_before_screening_was_not_passed_by_moderation(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    assert lifecycle.job_fail(job_id, code="engine_error", message="Screening could not run.")
    body = api_a.get(f"/api/v1/jobs/{job_id}").json()
    assert body["state"] == "failed" and body["queued_at"] is None
    assert body["moderation"]["state"] == "not_screened"
