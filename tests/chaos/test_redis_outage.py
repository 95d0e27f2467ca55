"""Redis killed (a crash: nothing it held survives) at each stage of a job: the job still reaches a
final state, and credits are held, captured or released exactly as the ledger rules say."""

from __future__ import annotations

import contextlib

import pytest

from moderation import services as moderation_services
from tests.chaos.conftest import assert_ledger_invariants
from tests.webapp.conftest import drain, post_job
from webapp.jobs.models import Job
from webapp.jobs.services import lifecycle, maintenance

pytestmark = pytest.mark.django_db(transaction=True)


def sweep_after_grace(settings_fixture) -> dict:
    settings_fixture.ENQUEUE_GRACE_S = 0  # don't wait the production grace period in a test
    settings_fixture.JOB_HEARTBEAT_TIMEOUT_S = 0
    return maintenance.jobs_sweep_stale()


def test_redis_down_at_submit_the_job_waits_then_runs(api_a, funded_user, astronaut_pair, own_redis, settings):
    source, target, _ = astronaut_pair
    own_redis.kill()

    response = post_job(api_a, source, target)
    assert response.status_code == 201, response.content  # committed: the row is the outbox
    job_id = response.json()["id"]
    assert api_a.get(f"/api/v1/jobs/{job_id}").status_code == 200  # reads work without Redis
    assert Job.objects.get(id=job_id).state == "created"
    assert api_a.get("/api/v1/me").json()["held"] != "0.00"  # the hold stays with the job

    own_redis.start()  # an empty Redis: the screening task was never enqueued
    assert sweep_after_grace(settings)["reenqueued"] == 1
    drain()
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    assert_ledger_invariants(funded_user)


def test_redis_lost_after_screening_the_gpu_run_is_enqueued_again(
    api_a, funded_user, astronaut_pair, own_redis, settings, monkeypatch
):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    real_screen = moderation_services.screen_inputs

    def screen_then_crash_redis(**kwargs):
        outcome = real_screen(**kwargs)
        own_redis.kill()  # the verdict is in; the GPU enqueue after commit will find no Redis
        return outcome

    monkeypatch.setattr(moderation_services, "screen_inputs", screen_then_crash_redis)
    with contextlib.suppress(Exception):  # the burst worker itself loses its Redis
        drain([settings.MODERATION_QUEUE])
    monkeypatch.undo()
    assert Job.objects.get(id=job_id).state == "queued"  # screened, but its run was never enqueued

    own_redis.start()
    counts = sweep_after_grace(settings)
    assert counts["reenqueued"] == 1
    assert maintenance.jobs_sweep_stale() == {"requeued": 0, "failed": 0, "rescreened": 0, "reenqueued": 0}
    drain()
    assert Job.objects.get(id=job_id).state == "succeeded"
    assert_ledger_invariants(funded_user)


def test_redis_lost_while_screening_the_job_is_screened_again(
    api_a, funded_user, astronaut_pair, own_redis, settings, monkeypatch
):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]

    def crash_redis_mid_screening(**kwargs):
        own_redis.kill()
        raise ConnectionError("the moderation worker lost Redis and died mid-screening")

    monkeypatch.setattr(moderation_services, "screen_inputs", crash_redis_mid_screening)
    with contextlib.suppress(Exception):
        drain([settings.MODERATION_QUEUE])
    monkeypatch.undo()
    assert Job.objects.get(id=job_id).state == "screening"

    own_redis.start()
    assert sweep_after_grace(settings)["rescreened"] == 1
    drain()
    assert Job.objects.get(id=job_id).state == "succeeded"
    assert_ledger_invariants(funded_user)


def test_redis_lost_after_the_result_is_recorded_nothing_is_charged_twice(
    api_a, funded_user, astronaut_pair, own_redis, settings, monkeypatch
):
    """The capture commits; the webhook enqueue and RQ's own bookkeeping then fail."""
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain([settings.MODERATION_QUEUE])
    real_succeed = lifecycle.job_succeed

    def succeed_then_crash_redis(job_uuid, outcome):
        moved = real_succeed(job_uuid, outcome)
        own_redis.kill()
        return moved

    monkeypatch.setattr(lifecycle, "job_succeed", succeed_then_crash_redis)
    with contextlib.suppress(Exception):
        drain(list(settings.GPU_QUEUES))
    monkeypatch.undo()
    own_redis.start()
    assert Job.objects.get(id=job_id).state == "succeeded"
    assert sweep_after_grace(settings) == {"requeued": 0, "failed": 0, "rescreened": 0, "reenqueued": 0}
    assert_ledger_invariants(funded_user)
