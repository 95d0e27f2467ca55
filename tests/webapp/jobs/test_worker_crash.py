"""A worker killed with SIGKILL mid-job: the job is requeued and succeeds, or fails — never stuck."""

from __future__ import annotations

import os
import signal
import threading
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import OperationalError
from django.utils import timezone

from billing.models import LedgerEntry
from moderation import services as moderation_services
from tests.helpers.waiting import wait_for_state, wait_until
from tests.helpers.worker_process import start_worker
from tests.webapp.conftest import drain, post_job
from webapp.jobs import tasks
from webapp.jobs.models import Job
from webapp.jobs.services import lifecycle, maintenance
from webapp.jobs.worker import Heartbeat
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)


def test_sigkilled_worker_job_is_requeued_and_succeeds_once(api_a, astronaut_pair, settings):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain([settings.MODERATION_QUEUE])  # screening passes; the GPU run is now queued
    assert Job.objects.get(id=job_id).state == "queued"

    worker = start_worker(VISAGE_FAULT_PAUSE_S="120", VISAGE_JOB_HEARTBEAT_TIMEOUT_S="2")
    try:
        running = wait_for_state(job_id, "running", timeout_s=120)
        assert running.attempts == 1
        wait_until(  # the heartbeat thread is alive
            lambda: Job.objects.get(id=job_id).heartbeat_at > running.heartbeat_at,
            timeout_s=60,
            what="a heartbeat newer than the start",
        )
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()

    settings.JOB_HEARTBEAT_TIMEOUT_S = 2
    last_beat = Job.objects.get(id=job_id).heartbeat_at
    wait_until(
        lambda: timezone.now() - last_beat > timedelta(seconds=2.2), timeout_s=30, what="the heartbeat to go stale"
    )
    assert Job.objects.get(id=job_id).heartbeat_at == last_beat  # nobody beats for the killed worker
    assert Job.objects.get(id=job_id).state == "running"  # RQ alone has not noticed yet
    assert maintenance.jobs_sweep_stale() == {"requeued": 1, "failed": 0, "rescreened": 0, "reenqueued": 0}
    assert Job.objects.get(id=job_id).state == "queued"

    drain()
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    assert job.attempts == 2
    assert LedgerEntry.objects.filter(job_id=job_id, kind="capture").count() == 1


def test_job_whose_attempts_are_spent_fails_and_releases(api_a, astronaut_pair, settings):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain([settings.MODERATION_QUEUE])
    # As if the last allowed attempt's worker died a minute ago.
    stale = timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S + 60)
    Job.objects.filter(id=job_id).update(state="running", attempts=settings.JOB_MAX_ATTEMPTS, heartbeat_at=stale)
    assert maintenance.jobs_sweep_stale()["failed"] == 1
    job = Job.objects.get(id=job_id)
    assert job.state == "failed" and job.error_code == "worker_lost"
    assert float(api_a.get("/api/v1/me").json()["held"]) == 0
    assert maintenance.jobs_sweep_stale() == {"requeued": 0, "failed": 0, "rescreened": 0, "reenqueued": 0}  # nothing moves twice


def test_a_superseded_attempt_that_ends_late_keeps_the_live_result(api_a, astronaut_pair, monkeypatch):
    """The sweeper takes a slow attempt for dead and requeues it; attempt 2 succeeds; attempt 1
    then ends, is refused, and discards its result: every attempt stored under the same keys, so
    that deleted the succeeded job's result and copies (charged, and gone)."""
    real = moderation_services.screen_output
    calls = []

    def attempt_1_stalls_while_attempt_2_runs(*, subject_id, pixels):
        calls.append(subject_id)
        if len(calls) == 1:
            Job.objects.filter(id=subject_id).update(heartbeat_at=timezone.now() - timedelta(hours=1))
            assert maintenance.jobs_sweep_stale()["requeued"] == 1
            tasks.run_job(str(subject_id))  # attempt 2, to the end
            assert Job.objects.get(id=subject_id).state == "succeeded"
        return real(subject_id=subject_id, pixels=pixels)

    monkeypatch.setattr(moderation_services, "screen_output", attempt_1_stalls_while_attempt_2_runs)
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain()
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded" and job.attempts == 2 and ".a2." in job.result_key
    assert all(storage.exists(settings.S3_RESULTS_BUCKET, key) for key in (job.result_key, job.before_key))
    assert not [key for key in storage.list_keys(settings.S3_RESULTS_BUCKET) if ".a1." in key]  # attempt 1's discarded
    assert LedgerEntry.objects.filter(job_id=job_id, kind="capture").count() == 1


def test_a_database_blip_does_not_end_a_jobs_heartbeat(monkeypatch, settings):
    """One failed beat ended the thread: the job went on without beats and the sweeper took it for dead."""
    settings.JOB_HEARTBEAT_TIMEOUT_S = 2  # a beat every 0.5 s
    beats, third = [], threading.Event()

    def flaky(job_id):
        beats.append(job_id)
        if len(beats) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        if len(beats) >= 3:
            third.set()

    monkeypatch.setattr(lifecycle, "job_heartbeat", flaky)
    with Heartbeat(uuid.uuid4()):
        assert third.wait(30), f"{len(beats)} beat(s), then none"
