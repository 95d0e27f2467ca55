"""`manage.py visage_worker_probe` (the worker pods' liveness/readiness probe) reads the worker's
own heartbeat: it passes for a live worker, fails for a dead or frozen one."""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.core.management import CommandError, call_command

from tests.helpers.waiting import wait_until
from tests.helpers.worker_process import start_worker

pytestmark = pytest.mark.django_db(transaction=True)


def probe(**options) -> str | None:
    """The probe's output when it passes, None when it fails."""
    from io import StringIO

    out = StringIO()
    try:
        call_command("visage_worker_probe", stdout=out, **options)
    except CommandError:
        return None
    return out.getvalue()


def test_probe_follows_the_workers_heartbeat():
    assert probe() is None  # no worker on this host yet

    worker = start_worker()
    try:
        output = wait_until(probe, timeout_s=180, what="the probe to pass once the worker is up")
        assert "heartbeating" in output

        # Frozen (the process exists, its loop does not run): the heartbeat goes stale.
        os.killpg(worker.pid, signal.SIGSTOP)
        time.sleep(1.5)
        assert probe(max_age_s=1.0) is None
        os.killpg(worker.pid, signal.SIGCONT)
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()

    # Killed: its record is still in Redis, but no live process wrote it.
    assert probe() is None
