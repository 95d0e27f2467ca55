"""What a log line is about: the request, job, queue, attempt and stage the current code works for.

Context variables, so the web server's threads and a worker's heartbeat thread keep theirs apart. The
request id is set by webapp.ops.request_id, copied into every RQ task's meta by dispatch, and
restored by the worker around the task, so one id follows a job from the API call to its webhook.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

FIELDS = ("request_id", "job_id", "queue", "attempt", "stage")

_context: contextvars.ContextVar[dict | None] = contextvars.ContextVar("visage_log_context", default=None)


def current() -> dict:
    return dict(_context.get() or {})


@contextmanager
def bound(**fields) -> Iterator[None]:
    """Add fields (None values are skipped) for the enclosed block."""
    merged = {**(_context.get() or {}), **{k: v for k, v in fields.items() if v is not None}}
    token = _context.set(merged)
    try:
        yield
    finally:
        _context.reset(token)


def request_id() -> str | None:
    return (_context.get() or {}).get("request_id")
