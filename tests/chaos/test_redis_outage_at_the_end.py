"""Redis down at the moment a job ends: the database row still drives what users see. Its webhook
and its push are owed by outbox rows and delivered once Redis is back, once each; the API never answers from a Redis-side
record older than the row (no 304 for the old ETag, no `running` body)."""

from __future__ import annotations

import contextlib
import json

import pytest

from tests.chaos.conftest import assert_ledger_invariants
from tests.helpers.webhook_receiver import Receiver
from tests.webapp.conftest import drain, post_job
from webapp.jobs.models import Job
from webapp.jobs.services import lifecycle, push_outbox, webhook_outbox

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_job_that_ends_while_redis_is_down_sends_its_webhook_and_shows_succeeded(
    api_a, funded_user, astronaut_pair, own_persistent_redis, fcm_standin, settings, monkeypatch
):
    receiver = Receiver()
    try:
        phone = {"platform": "fcm", "token": "chaos:" + "p" * 150, "app_id": "com.example.visage"}
        assert api_a.post("/api/v1/devices", phone, format="json").status_code == 201
        source, target, _ = astronaut_pair
        job_id = post_job(api_a, source, target, webhook_url=receiver.url).json()["id"]
        url = f"/api/v1/jobs/{job_id}"
        drain([settings.MODERATION_QUEUE])
        seen = {}
        real_succeed = lifecycle.job_succeed

        def poll_then_stop_redis_then_succeed(job_uuid, outcome):
            seen["running"] = api_a.get(url)  # a client polls the running job: its ETag is recorded
            own_persistent_redis.stop()  # a clean shutdown: what Redis held comes back on restart
            return real_succeed(job_uuid, outcome)

        monkeypatch.setattr(lifecycle, "job_succeed", poll_then_stop_redis_then_succeed)
        with contextlib.suppress(Exception):  # the burst worker loses its Redis
            drain(list(settings.GPU_QUEUES))
        monkeypatch.undo()
        assert seen["running"].json()["state"] == "running"
        assert Job.objects.get(id=job_id).state == "succeeded"
        assert receiver.requests == [] and fcm_standin.sends == []  # their enqueues found no Redis

        own_persistent_redis.start()
        stale = api_a.get(url, headers={"If-None-Match": seen["running"]["ETag"]})
        assert stale.status_code == 200 and stale.json()["state"] == "succeeded"
        assert api_a.get(url).json()["state"] == "succeeded"

        settings.ENQUEUE_GRACE_S = 0  # don't wait the production grace period in a test
        assert webhook_outbox.webhooks_sweep_undelivered() == 1
        drain([settings.WEBHOOK_QUEUE])
        assert len(receiver.requests) == 1
        event = json.loads(receiver.requests[0][1])
        assert event["type"] == "job.succeeded" and event["data"]["id"] == job_id
        assert webhook_outbox.webhooks_sweep_undelivered() == 0  # delivered: never sent again
        assert push_outbox.pushes_sweep_undelivered() == 1
        drain([settings.WEBHOOK_QUEUE])
        assert [m["data"] for m in fcm_standin.delivered] == [{"job_id": job_id, "state": "succeeded"}]
        assert push_outbox.pushes_sweep_undelivered() == 0
        assert fcm_standin.problems == []
        assert_ledger_invariants(funded_user)
    finally:
        receiver.close()
