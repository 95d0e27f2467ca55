"""A refund (the billing admin's action) shows in the job's answer at once: not a 304 of "paid" to a
client that polls with If-None-Match, nor the cached body of "paid"; and the job's stream hears of it."""

from __future__ import annotations

import json
import uuid

import pytest

from billing import services as billing_services
from billing.models import LedgerEntry
from tests.webapp.conftest import post_job
from webapp.jobs import events as job_events
from webapp.jobs.choices import JobState
from webapp.jobs.models import Job
from webapp.jobs.services import lifecycle

pytestmark = pytest.mark.django_db(transaction=True)


def _job_events(job: Job) -> list[dict]:
    client = job_events._client("quick")
    return [
        data for _, fields in client.xrange(job_events.stream_key(job.owner_id))
        if (data := json.loads(fields["event"]))["id"] == str(job.id)
    ]


def _succeeded_job(api_a, astronaut_pair) -> Job:
    source, target, _ = astronaut_pair
    response = post_job(api_a, source, target, mode="standard", resolution="720p")
    assert response.status_code == 201, response.content
    job_id = uuid.UUID(response.json()["id"])
    Job.objects.filter(id=job_id).update(state=JobState.QUEUED)
    assert lifecycle.job_start(job_id)
    outcome = lifecycle.JobOutcome(
        result_key=f"results/{job_id}.jpg", result_media_type="image/jpeg", result_bytes=10,
        frames=1, width=512, height=512, gpu_seconds=0.01, wall_seconds=0.02, stage_ms={}, engine_notes={},
    )
    assert lifecycle.job_succeed(job_id, outcome)
    return Job.objects.get(id=job_id)


def test_refund_is_visible_to_a_conditional_get(api_a, astronaut_pair):
    job = _succeeded_job(api_a, astronaut_pair)
    first = api_a.get(f"/api/v1/jobs/{job.id}")
    assert first.status_code == 200
    assert first.json()["cost"]["state"] == "paid"
    etag = first["ETag"]
    before = _job_events(job)
    billing_services.job_refund(job_id=job.id, actor=None, reason="goodwill")
    assert LedgerEntry.objects.filter(job_id=job.id, kind="refund").exists()
    again = api_a.get(f"/api/v1/jobs/{job.id}", headers={"If-None-Match": etag})
    assert again.status_code == 200, "304 Not Modified after a refund: the client keeps 'paid'"
    assert again.json()["cost"]["state"] == "refunded"
    after = _job_events(job)  # its clients hear of it
    assert len(after) == len(before) + 1 and after[-1]["version"] > before[-1]["version"]


def test_refund_is_visible_to_a_plain_get(api_a, astronaut_pair):
    job = _succeeded_job(api_a, astronaut_pair)
    first = api_a.get(f"/api/v1/jobs/{job.id}")
    assert first.json()["cost"]["state"] == "paid"
    billing_services.job_refund(job_id=job.id, actor=None, reason="goodwill")
    again = api_a.get(f"/api/v1/jobs/{job.id}")
    assert again.status_code == 200
    assert again.json()["cost"]["state"] == "refunded", again.json()["cost"]
    assert "Refunded" in again.json()["credits"]
