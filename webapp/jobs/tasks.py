"""RQ entry points (enqueued by dotted path from dispatch.py). Each takes ids, loads the row and
hands the work to a step; RQ's failure callbacks map "RQ gave up" onto job states.

A new kind of job = one module in steps/ and one line in RUNNERS.
"""

from __future__ import annotations

import logging
import time
import uuid

from django.utils.translation import gettext_noop
from rq.exceptions import AbandonedJobError

from swap.errors import InferenceUnavailable
from webapp.media.choices import MediaKind
from webapp.media.storage import StorageError
from webapp.telemetry import context

from . import engine, pushes, webhooks
from .choices import JobState
from .services import lifecycle, maintenance
from .states import current
from .steps import image, screen, segments, video
from .steps.common import fault_injection_pause, job_for_step, run_guarded

logger = logging.getLogger(__name__)

RUNNERS = {MediaKind.IMAGE: image.run, MediaKind.VIDEO: video.run}


def screen_job(job_id: str) -> None:
    screen.run(uuid.UUID(job_id))


def run_job(job_id: str) -> None:
    job_uuid = uuid.UUID(job_id)
    if not lifecycle.job_start(job_uuid):
        logger.info("job %s is not queued any more; nothing to do", job_id)
        return
    job = job_for_step(job_uuid)
    started = time.perf_counter()
    fault_injection_pause()
    # The attempt job_start just counted (an RQ retry of this task is a new attempt): in every log line.
    with context.bound(attempt=job.attempts), engine.job_routing(job_uuid):
        run_guarded(job_uuid, lambda: RUNNERS[job.target.kind](job, started=started), whole_job=True)


def run_video_segment(job_id: str, attempt: int, index: int) -> None:
    with engine.job_routing(uuid.UUID(job_id)):
        segments.run_segment(uuid.UUID(job_id), attempt, index)


def finish_video_job(job_id: str, attempt: int) -> None:
    with engine.job_routing(uuid.UUID(job_id)):
        segments.finish_video_job(uuid.UUID(job_id), attempt)


def deliver_webhook(delivery_id: str) -> None:
    webhooks.deliver(uuid.UUID(delivery_id))


def deliver_push(delivery_id: str) -> None:
    pushes.deliver(uuid.UUID(delivery_id))


# --- RQ failure callbacks: (job, connection, type, value, traceback) -----------------------------------


def on_run_failure(job, connection, exc_type, exc_value, traceback) -> None:
    """RQ gave up on a run (retries spent, timeout, worker lost): the job must not stay queued or running."""
    if exc_type is AbandonedJobError:
        maintenance.jobs_sweep_stale()  # requeue-or-fail by our own attempt count
        return
    if job.retries_left:
        return  # RQ will run it again
    service = "inference" if issubclass(exc_type, InferenceUnavailable) else None
    service = service or ("storage" if issubclass(exc_type, StorageError) else None)
    attempts = (current(uuid.UUID(job.args[0])) or ("", 0))[1]
    lifecycle.job_fail(
        uuid.UUID(job.args[0]),
        code=f"{service}_unavailable" if service else "internal_error",
        message=lifecycle.UNAVAILABLE_MESSAGES[service].format(attempts=attempts)
        if service
        else "The job could not be completed after several attempts.",
        from_states=[JobState.QUEUED, JobState.RUNNING],
    )


def on_video_task_failure(job, connection, exc_type, exc_value, traceback) -> None:
    """A video segment or join gave up (retries spent, timeout): the parent job fails."""
    if job.retries_left:
        return
    segments.segment_gave_up(uuid.UUID(job.args[0]))


def on_screening_failure(job, connection, exc_type, exc_value, traceback) -> None:
    if job.retries_left:
        return  # a transient fault (database lock, S3 hiccup): RQ runs the screening again
    lifecycle.job_fail(
        uuid.UUID(job.args[0]),
        code="screening_error",
        message=gettext_noop("Content screening failed. Please try again."),
        from_states=[JobState.CREATED, JobState.SCREENING],
    )
