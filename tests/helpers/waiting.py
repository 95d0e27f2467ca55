"""Polling for something another process does (a worker, a server), with a deadline and a message."""

from __future__ import annotations

import time

from webapp.jobs.models import Job


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
