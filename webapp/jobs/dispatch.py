"""Where work goes on Redis: every enqueue of a job's tasks, by dotted path.

Tasks are named by string ("webapp.jobs.tasks.run_job"), so this module never imports them and
services can enqueue without importing the steps that do the work. Each attempt at a job gets
RQ ids of its own (`run-<job>-<attempt>`, segment/join ids per attempt), so a requeued job never
collides with what a dead worker left in RQ's registries. Tasks that belong to a running job
carry its id in `meta["heartbeat_job_id"]`: the worker keeps that job's heartbeat fresh while
they run (webapp/jobs/worker.py).
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from datetime import UTC, datetime, timedelta

import django_rq
import redis
from django.conf import settings
from django.utils import timezone
from redis.exceptions import RedisError
from rq import Callback, Retry, worker_registration
from rq.exceptions import NoSuchJobError
from rq.job import Dependency
from rq.job import Job as RQJob

from webapp.telemetry import context, tracing

logger = logging.getLogger(__name__)

TASKS = "webapp.jobs.tasks"
# Transient faults (S3/Redis hiccups) are retried with backoff; everything else fails at once.
GPU_RETRY = Retry(max=3, interval=[5, 30, 120])
SCREENING_RETRY = Retry(max=3, interval=[2, 10, 60])
# A failed video segment is retried alone; its siblings' parts are kept.
SEGMENT_RETRY = Retry(max=2, interval=[5, 30])
WEBHOOK_RETRY = Retry(max=5, interval=[10, 60, 300, 1800, 7200])
# Tries of one webhook in all (RQ's retries and the sweeper's re-enqueues), counted in its row.
WEBHOOK_MAX_ATTEMPTS = WEBHOOK_RETRY.max + 1
# A push is news only for a while: fewer, shorter waits than a webhook's.
PUSH_RETRY = Retry(max=4, interval=[10, 60, 300, 1800])
PUSH_MAX_ATTEMPTS = PUSH_RETRY.max + 1
FAILURE_TTL_S = 7 * 86400
TASK_IDS_TTL_S = 7 * 86400
# RQ states of a task that will run later without anyone's help (a `deferred` join only waits on
# its segments, so it says nothing about whether the job is alive).
WAITING = ("queued", "scheduled")
CANCELABLE = (*WAITING, "deferred")


def _task(name: str) -> str:
    return f"{TASKS}.{name}"


def gpu_queue(queue_name: str) -> str:
    """The job's GPU queue, or `default` for a name no worker listens on."""
    return queue_name if queue_name in settings.GPU_QUEUES else "default"


def screening_task_id(job_id: uuid.UUID) -> str:
    return f"screen-{job_id}"


def run_task_id(job_id: uuid.UUID, attempt: int) -> str:
    return f"run-{job_id}-{attempt}"


def is_run_task(task_id: str) -> bool:
    """Is this RQ id a job's whole GPU run (not a video segment/join, nor a screening)?"""
    return task_id.startswith("run-")


def video_task_id(job_id: uuid.UUID, attempt: int, what: str) -> str:
    """RQ id of a video job's segment/join task: one per attempt, so old segments never collide."""
    return f"video-{job_id}-{attempt}-{what}"


def _children_key(job_id: uuid.UUID, attempt: int) -> str:
    return f"visage:children:{job_id}:{attempt}"


_connections: dict[tuple[int, str, str], redis.Redis] = {}
_connections_lock = threading.Lock()


def rq_connection(queue_name: str = "default") -> redis.Redis:
    """This process's client for an RQ queue's Redis, made once. django_rq.get_connection makes a
    new client, with a pool of its own, every call: each enqueue and each readiness or liveness
    read opened (and the garbage collector later closed) a TCP connection, ~6 a job in the web
    process alone (bench/jobpath.py's burst, py-spy). redis.Redis is thread-safe: each command
    takes a connection from the shared pool. Per process (a forked child makes its own) and per the
    queue's settings (a changed RQ_QUEUES, as in tests, gets a client of its own)."""
    key = (os.getpid(), queue_name, repr(sorted(settings.RQ_QUEUES[queue_name].items())))
    with _connections_lock:
        if key not in _connections:
            _connections[key] = django_rq.get_connection(queue_name)
        return _connections[key]


def live_workers(queue_name: str) -> int:
    """How many workers take tasks from `queue_name` now: RQ's per-queue worker set, less those whose
    (TTL-bound) key is gone (stopped without unregistering). Two Redis round trips, no worker's data
    read. 0 when there are none or Redis cannot say."""
    try:
        connection = rq_connection(queue_name)
        names = sorted(connection.smembers(worker_registration.WORKERS_BY_QUEUE_KEY % queue_name))
        if not names:
            return 0
        pipeline = connection.pipeline(transaction=False)
        for name in names:
            pipeline.exists(name)
        return sum(1 for alive in pipeline.execute() if alive)
    except RedisError:
        logger.warning("could not count the workers of queue %s", queue_name, exc_info=True)
        return 0


def rq_queue(name: str):
    """An RQ queue (django_rq's, with its settings) on this process's client."""
    return django_rq.get_queue(name, connection=rq_connection(name))


def _meta(**fields) -> dict:
    """Task meta: the request id (and trace context) that started the job ride along, so the
    worker's logs and spans connect to the request."""
    request_id = context.request_id()
    meta = {**fields, "request_id": request_id} if request_id else dict(fields)
    trace_context = tracing.inject()  # {} unless tracing is on: the task continues this trace
    return {**meta, "trace": trace_context} if trace_context else meta


def enqueue_screening(job_id: uuid.UUID) -> None:
    rq_queue(settings.MODERATION_QUEUE).enqueue(
        _task("screen_job"),
        str(job_id),
        job_id=screening_task_id(job_id),
        meta=_meta(),
        on_failure=Callback(_task("on_screening_failure")),
        job_timeout=300,
        failure_ttl=FAILURE_TTL_S,
        retry=SCREENING_RETRY,
    )


def enqueue_gpu(job_id: uuid.UUID, queue_name: str, *, attempt: int) -> None:
    """The GPU run of `attempt` (1 for the first run, attempts + 1 for a requeue)."""
    rq_queue(gpu_queue(queue_name)).enqueue(
        _task("run_job"),
        str(job_id),
        job_id=run_task_id(job_id, attempt),
        meta=_meta(heartbeat_job_id=str(job_id)),
        retry=GPU_RETRY,
        on_failure=Callback(_task("on_run_failure")),
        job_timeout=settings.JOB_TIMEOUT_S,
        failure_ttl=FAILURE_TTL_S,
    )


def enqueue_video_segments(job_id: uuid.UUID, attempt: int, segments: int, queue_name: str) -> None:
    """N segment tasks at the FRONT of the job's GPU queue (any free GPU worker takes the next one,
    so the parent's heartbeat never waits behind other jobs) and a join task depending on all."""
    queue = rq_queue(gpu_queue(queue_name))
    common = dict(
        job_timeout=settings.JOB_TIMEOUT_S,
        failure_ttl=FAILURE_TTL_S,
        on_failure=Callback(_task("on_video_task_failure")),
        meta=_meta(heartbeat_job_id=str(job_id)),
    )
    ids = [video_task_id(job_id, attempt, f"segment-{index}") for index in range(segments)]
    join_id = video_task_id(job_id, attempt, "join")
    connection = queue.connection
    connection.sadd(_children_key(job_id, attempt), *ids, join_id)
    connection.expire(_children_key(job_id, attempt), TASK_IDS_TTL_S)
    jobs = []
    for index in reversed(range(segments)):  # at_front reverses: segment 0 ends up first
        jobs.append(
            queue.enqueue(
                _task("run_video_segment"),
                str(job_id),
                attempt,
                index,
                job_id=ids[index],
                retry=SEGMENT_RETRY,
                at_front=True,
                **common,
            )
        )
    queue.enqueue(
        _task("finish_video_job"),
        str(job_id),
        attempt,
        job_id=join_id,
        depends_on=Dependency(jobs=jobs, enqueue_at_front=True),
        retry=GPU_RETRY,
        **common,
    )


def children_pending(job_id: uuid.UUID, attempt: int, queue_name: str) -> bool:
    """Is a running job still waiting on segment/join tasks of this attempt?

    The parent's heartbeat only flows while one of its tasks runs, so a job whose segments wait
    in the queue behind other work, or whose failed segment waits out its retry backoff, looks
    silent. A `deferred` join only waits on the segments, so it does not count.
    """
    connection = rq_queue(gpu_queue(queue_name)).connection
    ids = sorted(member.decode() for member in connection.smembers(_children_key(job_id, attempt)))
    return _any_alive(ids, connection)


def screening_pending(job_id: uuid.UUID) -> bool:
    """Will the job's screening task run (or is it running) without anyone's help?"""
    return _any_alive([screening_task_id(job_id)], rq_connection(settings.MODERATION_QUEUE))


def run_pending(job_id: uuid.UUID, attempts: int, queue_name: str) -> bool:
    """Will a queued job's GPU run happen without anyone's help? Its task is the next attempt's,
    or any earlier attempt's task that RQ retries after a transient fault (RQ keeps a task's id
    across its retries, so the retry of `run-<job>-1` may be the job's third attempt)."""
    connection = rq_queue(gpu_queue(queue_name)).connection
    return _any_alive([run_task_id(job_id, n) for n in range(attempts + 1, 0, -1)], connection)


def _any_alive(ids: list[str], connection) -> bool:
    """Alive: a task is queued or scheduled (a retry), or `started` less than
    JOB_HEARTBEAT_TIMEOUT_S ago (its worker has not had time to prove itself). A task `started`
    longer ago under a silent job lost its worker; a missing, finished or failed task will never
    run again. Both mean: not alive."""
    if not ids:
        return False
    recent = timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)
    for task in RQJob.fetch_many(ids, connection=connection):
        if task is None:
            continue
        status = task.get_status(refresh=False)
        if status in WAITING:
            return True
        if status == "started" and task.started_at is not None and _aware(task.started_at) > recent:
            return True
    return False


def _aware(moment: datetime) -> datetime:
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def webhook_task_id(delivery_id: uuid.UUID) -> str:
    return f"webhook-{delivery_id}"


def enqueue_webhook(delivery_id: uuid.UUID) -> None:
    """One outbox row's delivery (models.WebhookDelivery). Redis down: logged; the row stays
    undelivered and the sweeper enqueues it again."""
    try:
        rq_queue(settings.WEBHOOK_QUEUE).enqueue(
            _task("deliver_webhook"),
            str(delivery_id),
            job_id=webhook_task_id(delivery_id),
            job_timeout=60,
            retry=WEBHOOK_RETRY,
            failure_ttl=FAILURE_TTL_S,
            meta=_meta(),
        )
    except RedisError as exc:  # a webhook must never break the job's own state change
        logger.warning("could not enqueue webhook %s (the sweeper will): %s", delivery_id, exc)


def webhook_pending(delivery_id: uuid.UUID) -> bool:
    """Will this delivery be tried (again) without anyone's help: queued, or a retry scheduled?"""
    return _any_alive([webhook_task_id(delivery_id)], rq_connection(settings.WEBHOOK_QUEUE))


def push_task_id(delivery_id: uuid.UUID) -> str:
    return f"push-{delivery_id}"


def enqueue_push(delivery_id: uuid.UUID) -> None:
    """One push outbox row's delivery (models.PushDelivery), on the webhooks' queue. Redis down:
    logged; the row stays undelivered and the sweeper enqueues it again."""
    try:
        rq_queue(settings.WEBHOOK_QUEUE).enqueue(
            _task("deliver_push"),
            str(delivery_id),
            job_id=push_task_id(delivery_id),
            job_timeout=60,
            retry=PUSH_RETRY,
            failure_ttl=FAILURE_TTL_S,
            meta=_meta(),
        )
    except RedisError as exc:  # a push must never break the job's own state change
        logger.warning("could not enqueue push %s (the sweeper will): %s", delivery_id, exc)


def push_pending(delivery_id: uuid.UUID) -> bool:
    """Will this push be tried (again) without anyone's help: queued, or a retry scheduled?"""
    return _any_alive([push_task_id(delivery_id)], rq_connection(settings.WEBHOOK_QUEUE))


def cancel_queued(job_id: uuid.UUID, *, attempts: int) -> None:
    """Best effort: take a canceled job's waiting tasks off their queues. The state check in every
    task guards anyway, so Redis trouble here is logged, never raised to the user."""
    try:
        connection = rq_connection("default")
        ids = [screening_task_id(job_id), *(run_task_id(job_id, n) for n in range(1, attempts + 2))]
        ids += [member.decode() for member in connection.smembers(_children_key(job_id, attempts))]
        for task in RQJob.fetch_many(ids, connection=connection):
            if task is not None and task.get_status(refresh=False) in CANCELABLE:
                try:
                    task.cancel()
                except NoSuchJobError:
                    pass
    except RedisError:
        logger.warning("could not take the tasks of canceled job %s off the queues", job_id, exc_info=True)
