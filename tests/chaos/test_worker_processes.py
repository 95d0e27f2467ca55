"""SIGKILLed workers leave no orphan processes behind (RQ's forked scheduler child used to outlive
its worker, holding the scheduler lock), and the separate scheduler moves due retries."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import django_rq
import pytest
from django.conf import settings
from rq import Worker

from tests.helpers.waiting import wait_until
from tests.helpers.worker_process import database_url_for_subprocess

pytestmark = pytest.mark.django_db(transaction=True)

KILLS = 50  # after 50 SIGKILLs no orphan remains
BATCH = 10  # started together: 50 one by one would cost ~3 min of Django start-ups


def session_members(session_id: int) -> list[int]:
    """PIDs of live processes in a session (Linux /proc), zombies excluded."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited while we looked
        state, session = fields[0], int(fields[3])
        if session == session_id and state != "Z":
            members.append(int(stat.parent.name))
    return members


def start(command: str, *args: str) -> subprocess.Popen:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="webapp.settings", DATABASE_URL=database_url_for_subprocess())
    return subprocess.Popen(
        [sys.executable, str(settings.BASE_DIR / "manage.py"), command, *args],
        env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def test_sigkilled_workers_leave_no_orphans():
    connection = django_rq.get_connection(settings.WEBHOOK_QUEUE)
    for _ in range(KILLS // BATCH):
        workers = [start("visage_worker", "--queues", settings.WEBHOOK_QUEUE) for _ in range(BATCH)]
        try:
            wait_until(  # idle: past start-up (where RQ would fork its scheduler), waiting for work
                lambda pids={w.pid for w in workers}: pids
                <= {w.pid for w in Worker.all(connection=connection) if w.get_state() == "idle"},
                timeout_s=120,
                what=f"{BATCH} workers to wait for work",
            )
        finally:
            for worker in workers:
                os.kill(worker.pid, signal.SIGKILL)  # the worker only, as the OOM killer would
            for worker in workers:
                worker.wait()
        time.sleep(0.2)  # let the kernel reap and re-parent anything left
        for worker in workers:
            assert session_members(worker.pid) == []  # the session id is the worker's pid


def test_the_scheduler_process_moves_due_retries():
    queue = django_rq.get_queue(settings.WEBHOOK_QUEUE)
    from datetime import timedelta

    task = queue.enqueue_in(timedelta(seconds=1), "webapp.jobs.tasks.deliver_webhook", "00000000-0000-0000-0000-000000000000")
    scheduler = start("visage_scheduler")
    try:
        wait_until(lambda: task.id in queue.get_job_ids(), timeout_s=60, what="the scheduler to enqueue the due task")
    finally:
        os.killpg(scheduler.pid, signal.SIGKILL)
        scheduler.wait()
