"""A worker killed with SIGKILL mid-job: the job is requeued and succeeds, or fails — never stuck."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from billing.models import LedgerEntry
from webapp import services
from webapp.models import Job

from .conftest import drain, post_job

pytestmark = pytest.mark.django_db(transaction=True)


def database_url_for_subprocess() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    return f"postgres://{user}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


def start_worker(**extra_env) -> subprocess.Popen:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="webapp.settings", DATABASE_URL=database_url_for_subprocess(),
               **extra_env)
    return subprocess.Popen(
        [sys.executable, str(settings.BASE_DIR / "manage.py"), "visage_worker", "--queues", "vip,default,batch"],
        env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def wait_for_state(job_id, state: str, timeout_s: float) -> Job:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = Job.objects.get(id=job_id)
        if job.state == state:
            return job
        time.sleep(0.2)
    raise AssertionError(f"job never reached {state}; it is {Job.objects.get(id=job_id).state}")


def test_sigkilled_worker_job_is_requeued_and_succeeds_once(api_a, astronaut_pair, settings):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain([settings.MODERATION_QUEUE])  # screening passes; the GPU run is now queued
    assert Job.objects.get(id=job_id).state == "queued"

    worker = start_worker(VISAGE_FAULT_PAUSE_S="120", VISAGE_JOB_HEARTBEAT_TIMEOUT_S="2")
    try:
        running = wait_for_state(job_id, "running", timeout_s=120)
        assert running.attempts == 1
        time.sleep(1.5)
        assert Job.objects.get(id=job_id).heartbeat_at > running.heartbeat_at  # the heartbeat thread is alive
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()

    settings.JOB_HEARTBEAT_TIMEOUT_S = 2
    time.sleep(2.5)
    assert Job.objects.get(id=job_id).state == "running"  # RQ alone has not noticed yet
    assert services.jobs_sweep_stale() == {"requeued": 1, "failed": 0, "rescreened": 0}
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
    assert services.jobs_sweep_stale()["failed"] == 1
    job = Job.objects.get(id=job_id)
    assert job.state == "failed" and job.error_code == "worker_lost"
    assert float(api_a.get("/api/v1/me").json()["held"]) == 0
    assert services.jobs_sweep_stale() == {"requeued": 0, "failed": 0, "rescreened": 0}  # nothing moves twice
