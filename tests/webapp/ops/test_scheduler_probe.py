"""`manage.py visage_scheduler_probe` (the scheduler pod's probes, compose's healthcheck) reads the
scheduler loop's own heartbeat: it passes while the loop runs, fails once the loop hangs, and fails
with no scheduler on this host. Real processes: the scheduler and the probe, as the pod runs them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from django.conf import settings

from tests.helpers.waiting import wait_until
from tests.helpers.worker_process import database_url_for_subprocess

pytestmark = pytest.mark.django_db(transaction=True)


def _env() -> dict:
    return dict(os.environ, DJANGO_SETTINGS_MODULE="webapp.settings", DATABASE_URL=database_url_for_subprocess())


def probe(*args: str) -> subprocess.CompletedProcess:
    """The probe command exactly as the manifests run it (exit 0: healthy)."""
    return subprocess.run(
        [sys.executable, str(settings.BASE_DIR / "manage.py"), "visage_scheduler_probe", *args],
        env=_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_the_probe_fails_when_the_scheduler_loop_hangs():
    scheduler = subprocess.Popen(
        [sys.executable, str(settings.BASE_DIR / "manage.py"), "visage_scheduler"],
        env=_env(), start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        passed = wait_until(
            lambda: (result := probe()).returncode == 0 and result, timeout_s=180, what="the probe to pass"
        )
        assert f"pid {scheduler.pid}" in passed.stdout

        # Hung: the process exists, its loop does not run (as in a Redis call that never returns).
        os.killpg(scheduler.pid, signal.SIGSTOP)
        time.sleep(3)
        hung = probe("--max-age-s", "2")
        assert hung.returncode == 1
        assert "stale scheduler heartbeat" in hung.stderr and f"pid {scheduler.pid}" in hung.stderr

        # Running again: the heartbeat is fresh again.
        os.killpg(scheduler.pid, signal.SIGCONT)
        wait_until(lambda: probe("--max-age-s", "30").returncode == 0, timeout_s=120, what="the probe to pass again")
    finally:
        os.killpg(scheduler.pid, signal.SIGKILL)
        scheduler.wait()
    # Gone (killed before its record expired): its record no longer counts (another test's live
    # scheduler on this host may still pass the probe).
    gone = probe()
    assert f"pid {scheduler.pid}" not in gone.stdout + gone.stderr
