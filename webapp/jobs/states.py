"""Where a job stands and the one way to move it: a guarded, conditional UPDATE.

    created → screening → (review →) queued → running → succeeded
    exits: rejected (moderation), failed (engine error or attempts spent), canceled (by the user)

`transition()` moves a job only if it is still in one of the expected states, so a retried or
duplicated worker can never move a job twice: the caller that got True owns the change.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db.models import F

from . import events
from .choices import TERMINAL_STATES, JobState
from .models import Job

__all__ = ["BEFORE_RUNNING", "CANCELABLE_STATES", "TERMINAL_STATES", "current", "transition"]
# A user may cancel anything not yet finished; a running job stops at its next checkpoint.
CANCELABLE_STATES = frozenset(
    {JobState.CREATED, JobState.SCREENING, JobState.REVIEW, JobState.QUEUED, JobState.RUNNING}
)
# Every state before a GPU worker takes the job.
BEFORE_RUNNING = (JobState.CREATED, JobState.SCREENING, JobState.QUEUED)


def transition(job_id: uuid.UUID, *, from_states: Iterable[str], to_state: str, **fields) -> bool:
    """Move a job only if it is still in one of `from_states`. True when this call moved it.

    A move raises the job's version and publishes its event once the transaction commits.
    """
    updated = Job.objects.filter(id=job_id, state__in=list(from_states)).update(
        state=to_state, version=F("version") + 1, **fields
    )
    if updated == 1:
        events.job_changed(job_id)
    return updated == 1


def current(job_id: uuid.UUID) -> tuple[str, int] | None:
    """(state, attempts) of a job, or None when it was deleted."""
    return Job.objects.filter(id=job_id).values_list("state", "attempts").first()
