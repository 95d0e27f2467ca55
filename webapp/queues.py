"""Where work goes on Redis. The RQ job id of a GPU run is the Job's UUID."""

from __future__ import annotations

import logging
import uuid

import django_rq
from django.conf import settings
from rq import Retry
from rq.exceptions import NoSuchJobError
from rq.job import Dependency
from rq.job import Job as RQJob

logger = logging.getLogger(__name__)

# Transient faults (S3/Redis hiccups) are retried with backoff; everything else fails at once.
GPU_RETRY = Retry(max=3, interval=[5, 30, 120])
SCREENING_RETRY = Retry(max=3, interval=[2, 10, 60])


def enqueue_screening(job_id: uuid.UUID) -> None:
    from . import tasks  # noqa: PLC0415 - tasks imports the engine lazily, keep imports light here

    django_rq.get_queue(settings.MODERATION_QUEUE).enqueue(
        tasks.screen_job, str(job_id), job_id=f"screen-{job_id}", on_failure=tasks.on_screening_failure,
        job_timeout=300, failure_ttl=7 * 86400, retry=SCREENING_RETRY,
    )


def enqueue_gpu(job_id: uuid.UUID, queue_name: str) -> None:
    from . import tasks  # noqa: PLC0415

    if queue_name not in settings.GPU_QUEUES:
        queue_name = "default"
    connection = django_rq.get_connection(queue_name)
    # A requeued run reuses the id: drop the dead run's registry entry so RQ's own abandoned-job
    # cleanup cannot later mistake the new run for the old one.
    for name in settings.GPU_QUEUES:
        registry = django_rq.get_queue(name).started_job_registry
        stale = [m for m in connection.zrange(registry.key, 0, -1) if m.decode().startswith(f"{job_id}:")]
        if stale:
            connection.zrem(registry.key, *stale)  # entries are "<job id>:<execution id>"
    try:
        RQJob.fetch(str(job_id), connection=connection).delete()
    except NoSuchJobError:
        pass
    django_rq.get_queue(queue_name).enqueue(
        tasks.run_job, str(job_id), job_id=str(job_id), retry=GPU_RETRY, on_failure=tasks.on_run_failure,
        job_timeout=settings.JOB_TIMEOUT_S, failure_ttl=7 * 86400,
    )


# A failed video segment is retried alone; its siblings' parts are kept.
SEGMENT_RETRY = Retry(max=2, interval=[5, 30])


def video_task_id(job_id: uuid.UUID, attempt: int, what: str) -> str:
    """RQ ids of a video job's segment/join tasks: UUIDs (the GPU worker parses ids as UUIDs),
    distinct per attempt so a requeued job never collides with its old segments."""
    return str(uuid.uuid5(job_id, f"{attempt}:{what}"))


def enqueue_video_segments(job_id: uuid.UUID, attempt: int, segments: int, queue_name: str) -> None:
    """N segment tasks at the FRONT of the job's GPU queue (any free GPU worker takes the next one,
    so the parent's heartbeat never waits behind other jobs) and a join task depending on all."""
    from . import tasks  # noqa: PLC0415

    if queue_name not in settings.GPU_QUEUES:
        queue_name = "default"
    queue = django_rq.get_queue(queue_name)
    common = dict(job_timeout=settings.JOB_TIMEOUT_S, failure_ttl=7 * 86400, on_failure=tasks.on_video_task_failure)
    jobs = []
    for index in reversed(range(segments)):  # at_front reverses: segment 0 ends up first
        jobs.append(queue.enqueue(
            tasks.run_video_segment, str(job_id), attempt, index, job_id=video_task_id(job_id, attempt, f"segment-{index}"),
            retry=SEGMENT_RETRY, at_front=True, **common,
        ))
    queue.enqueue(
        tasks.finish_video_job, str(job_id), attempt, job_id=video_task_id(job_id, attempt, "join"),
        depends_on=Dependency(jobs=jobs, enqueue_at_front=True), retry=GPU_RETRY, **common,
    )


def enqueue_webhook(job_id: uuid.UUID) -> None:
    from . import tasks  # noqa: PLC0415

    try:
        django_rq.get_queue(settings.WEBHOOK_QUEUE).enqueue(
            tasks.deliver_webhook, str(job_id), job_timeout=60, retry=Retry(max=5, interval=[10, 60, 300, 1800, 7200])
        )
    except Exception:  # a webhook must never break the job's own state change
        logger.exception("could not enqueue the webhook for job %s", job_id)


def cancel_queued(job_id: uuid.UUID) -> None:
    """Best effort: take a canceled job's pending run off its queue (the state check guards anyway)."""
    connection = django_rq.get_connection("default")
    for rq_id in (str(job_id), f"screen-{job_id}"):
        try:
            job = RQJob.fetch(rq_id, connection=connection)
        except NoSuchJobError:
            continue
        if job.get_status() in ("queued", "scheduled", "deferred"):
            job.cancel()


def gpu_queue_lengths() -> dict[str, int]:
    return {name: django_rq.get_queue(name).count for name in settings.GPU_QUEUES}
