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
from tests.webapp.conftest import drain, post_job
from webapp.jobs.models import Job
from webapp.jobs.services import maintenance

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


def wait_until(condition, *, timeout_s: float, what: str):
    """Poll `condition` until it returns something truthy (returned), or fail after the deadline."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for: {what}")


def wait_for_state(job_id, state: str, timeout_s: float) -> Job:
    return wait_until(
        lambda: Job.objects.filter(id=job_id, state=state).first(), timeout_s=timeout_s, what=f"job {state}"
    )


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
