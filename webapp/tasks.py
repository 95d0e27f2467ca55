"""RQ entry points. Each takes an id, loads the row, calls a service; outcomes map to job states."""

from __future__ import annotations

import logging
import uuid

from . import processing, screening, services, webhooks
from .choices import JobState

logger = logging.getLogger(__name__)


def screen_job(job_id: str) -> None:
    screening.screen_job(uuid.UUID(job_id))


def run_job(job_id: str) -> None:
    processing.run_job(uuid.UUID(job_id))


def run_video_segment(job_id: str, attempt: int, index: int) -> None:
    from . import video_processing  # noqa: PLC0415

    video_processing.run_segment(uuid.UUID(job_id), attempt, index)


def finish_video_job(job_id: str, attempt: int) -> None:
    from . import video_processing  # noqa: PLC0415

    video_processing.finish_video_job(uuid.UUID(job_id), attempt)


def on_video_task_failure(job, connection, exc_type, exc_value, traceback) -> None:
    """A video segment or join gave up (retries spent, timeout): the parent job fails."""
    if job.retries_left:
        return
    from . import video_processing  # noqa: PLC0415

    video_processing.segment_gave_up(uuid.UUID(job.args[0]))


def deliver_webhook(job_id: str) -> None:
    webhooks.deliver(uuid.UUID(job_id))


def on_run_failure(job, connection, exc_type, exc_value, traceback) -> None:
    """RQ gave up (retries spent, timeout, worker lost): the job must not stay queued or running."""
    job_id = uuid.UUID(job.id)
    from rq.exceptions import AbandonedJobError  # noqa: PLC0415

    if exc_type is AbandonedJobError:
        services.jobs_sweep_stale()  # requeue-or-fail by our own attempt count
        return
    if job.retries_left:
        return  # RQ will run it again
    services.job_fail(
        job_id, code="internal_error", message="The job could not be completed after several attempts; no charge was made.",
        from_states=[JobState.QUEUED, JobState.RUNNING],
    )


def on_screening_failure(job, connection, exc_type, exc_value, traceback) -> None:
    if job.retries_left:
        return  # a transient fault (database lock, S3 hiccup): RQ runs the screening again
    job_id = uuid.UUID(job.id.removeprefix("screen-"))
    services.job_fail(
        job_id, code="screening_error", message="Content screening failed; no charge was made. Please try again.",
        from_states=[JobState.CREATED, JobState.SCREENING],
    )
