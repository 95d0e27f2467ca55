"""Visage's RQ worker: one process per GPU, no fork per job, models loaded once and kept warm.

RQ's default worker forks a work-horse per job; a CUDA context does not survive fork and the
models would load per job. SimpleWorker runs jobs in this process instead. While a task that
belongs to a job runs (its id in `meta["heartbeat_job_id"]`, set by dispatch), a heartbeat thread
keeps `Job.heartbeat_at` fresh; a sweeper thread requeues or fails jobs whose worker died
(maintenance.jobs_sweep_stale), so a SIGKILL never leaves a job stuck in `running`.

Graceful drain: on SIGTERM, RQ's warm shutdown takes no new job and lets the running
one finish. If a job's GPU run is still going after WORKER_DRAIN_TIMEOUT_S, it is put back on its
queue by one guarded `running → queued` update and the process exits at once, so the job starts
again on another worker instead of being cut off by the grace period's SIGKILL and waiting out
the heartbeat timeout. Credits were only held; the one capture happens at the one success.
The RQ worker record's heartbeat is refreshed while a job runs too, so `visage_worker_probe`
can tell a working worker from a stuck one.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import close_old_connections, connection
from rq import SimpleWorker
from rq.exceptions import StopRequested

from webapp.telemetry import context, metrics, tracing

from . import dispatch, readiness
from .choices import JobState
from .services import direct_uploads, lifecycle, maintenance, push_outbox, stored_files, webhook_outbox

logger = logging.getLogger(__name__)

HEARTBEAT_INTERVAL_S = 5.0
# The RQ worker record in Redis lives WORKER_TTL_S past its last heartbeat; an idle worker beats
# every WORKER_TTL_S - 15 s (RQ's dequeue timeout), a busy one every WORKER_BEAT_INTERVAL_S.
WORKER_TTL_S = 60
WORKER_BEAT_INTERVAL_S = 15.0


class Heartbeat:
    """Background thread updating a running job's heartbeat until stopped."""

    def __init__(self, job_id: uuid.UUID):
        self.job_id = job_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{job_id}", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=HEARTBEAT_INTERVAL_S * 2)

    def _run(self) -> None:
        interval = min(HEARTBEAT_INTERVAL_S, max(0.5, settings.JOB_HEARTBEAT_TIMEOUT_S / 4))
        while not self._stop.wait(interval):
            try:
                lifecycle.job_heartbeat(self.job_id)
            except Exception:  # a database blip must not end the beats: the sweeper would take a live job for dead
                logger.exception("heartbeat of job %s failed; beating on", self.job_id)
                connection.close()  # a broken connection is not reused: the next beat opens a new one
        connection.close()


class Sweeper:
    """Background thread: every few seconds, requeue or fail jobs whose worker died, and enqueue
    again the webhooks and pushes whose enqueue was lost; now and then, delete originals no job owns."""

    def __init__(self, interval_s: float = 10.0):
        self.interval_s = interval_s
        self._next_upload_sweep = 0.0  # the bucket listing is costlier: every UPLOAD_SWEEP_INTERVAL_S
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stale-job-sweeper", daemon=True)

    def start(self) -> Sweeper:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                counts = maintenance.jobs_sweep_stale()
                counts["webhooks"] = webhook_outbox.webhooks_sweep_undelivered()
                counts["pushes"] = push_outbox.pushes_sweep_undelivered()
                if time.monotonic() >= self._next_upload_sweep:
                    self._next_upload_sweep = time.monotonic() + settings.UPLOAD_SWEEP_INTERVAL_S
                    counts["orphan_uploads"] = stored_files.uploads_sweep_orphans()
                if any(counts.values()):
                    logger.warning("swept stale jobs: %s", counts)
                if expired := direct_uploads.direct_uploads_expire():
                    logger.info("expired %d abandoned direct uploads", expired)
            except Exception:  # the sweeper must outlive a database or Redis blip
                logger.exception("stale-job sweep failed")
            finally:
                connection.close()
            self._stop.wait(self.interval_s)


class WorkerBeat:
    """Background thread refreshing the RQ worker record's heartbeat while a job runs in-process
    (SimpleWorker beats only between jobs)."""

    def __init__(self, worker: SimpleWorker):
        self.worker = worker
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="worker-heartbeat", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(WORKER_BEAT_INTERVAL_S):
            try:
                # Never shorten the TTL RQ gave the record for this job (job timeout + 60 s).
                self.worker.heartbeat(timeout=max(self.worker.worker_ttl, settings.JOB_TIMEOUT_S) + 60)
            except Exception:  # a Redis blip: the next beat retries; the probe sees a stale beat meanwhile
                logger.warning("worker heartbeat failed", exc_info=True)


class VisageWorker(SimpleWorker):
    """Runs jobs in-process; a task that belongs to a job gets a heartbeat thread while it runs."""

    def __init__(
        self,
        *args,
        idle_steps: Iterator[object] | None = None,
        warming: tuple[list[str], float] | None = None,
        **kwargs,
    ):
        """`idle_steps`: work done only while no job waits, one short step at a time (the GPU
        worker's speed measurement, webapp.jobs.steps.calibrate), never beside a job. `warming`:
        the roles (webapp.jobs.readiness) this worker marked itself warming for, and since when
        (epoch seconds): marked ready once RQ has registered it."""
        kwargs.setdefault("worker_ttl", WORKER_TTL_S)
        super().__init__(*args, **kwargs)
        self._idle_steps = idle_steps
        self._warming = warming
        self._current_task = None  # the RQ job running now, for the drain deadline
        self._current_lock = threading.Lock()
        self._drain_timer: threading.Timer | None = None

    def register_birth(self, *args, **kwargs):
        super().register_birth(*args, **kwargs)
        if self._warming is not None:
            roles, since = self._warming
            for role in roles:
                readiness.mark_ready(role, self.name, took_s=time.time() - since)
            self._warming = None

    def unsubscribe(self):
        """RQ's, without a wait of up to a minute at the worker's end (SIGTERM, the end of a burst).

        RQ 3.0 runs the command listener with a 60 s sleep_time and stops it with `stop()`, which
        redis-py 8 made wait for the thread to end. A listener that has already seen its channel's
        unsubscribe sleeps up to those 60 s waiting for a new subscription, so `stop()` hung a minute
        now and then (seen about once in each full run of the suite, which ends hundreds of workers). Here the
        listener is told to stop first (the unsubscribe reply then ends its read), is given a second,
        and is left behind if it still sleeps: a daemon thread, stopped, on a closed connection."""
        thread = self.pubsub_thread
        if not thread:
            return
        self.log.info("Worker %s: unsubscribing from channel %s", self.name, self.pubsub_channel_name)
        thread.stop(timeout=0)  # clears its running flag; the wait is the bounded join below
        self.pubsub.unsubscribe()
        thread.join(timeout=1)
        self.pubsub.close()

    def dequeue_job_and_maintain_ttl(self, timeout, max_idle_time=None):
        """A waiting job first; while none waits, the next idle step; then RQ's blocking wait."""
        while self._idle_steps is not None and not self._stop_requested:
            result = super().dequeue_job_and_maintain_ttl(None)  # a look, without waiting
            if result is not None:
                return result
            self._run_idle_step()
        return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)

    def _run_idle_step(self) -> None:
        close_old_connections()
        try:
            next(self._idle_steps)
        except StopIteration:
            self._idle_steps = None
        except StopRequested:  # SIGTERM while idle: RQ's clean stop, not a failed step
            raise
        except Exception:  # a failed measurement leaves the previous calibration in place
            logger.exception("idle work failed; the worker goes on without it")
            self._idle_steps = None

    def execute_job(self, job, queue):
        close_old_connections()
        with self._current_lock:
            self._current_task = job
        try:
            with WorkerBeat(self):
                heartbeat_job_id = job.meta.get("heartbeat_job_id")
                if heartbeat_job_id:
                    with Heartbeat(uuid.UUID(heartbeat_job_id)):
                        return super().execute_job(job, queue)
                return super().execute_job(job, queue)
        finally:
            with self._current_lock:
                self._current_task = None
            close_old_connections()

    def perform_job(self, job, queue, *args, **kwargs):
        """The task runs with its job's log context (and trace, when tracing is on); its queue
        wait is observed first."""
        _observe_queue_wait(job, queue.name)
        subject = job.meta.get("heartbeat_job_id") or (job.args[0] if job.args else None)
        attempt = job.args[1] if len(job.args) > 1 and isinstance(job.args[1], int) else None
        task = job.func_name.rsplit(".", 1)[-1]
        with context.bound(
            request_id=job.meta.get("request_id"), job_id=subject, queue=queue.name, attempt=attempt
        ):
            with tracing.continued(
                job.meta.get("trace"), f"rq {task}", **{"visage.job_id": subject, "visage.queue": queue.name}
            ):
                return super().perform_job(job, queue, *args, **kwargs)

    def request_stop(self, signum, frame):
        """SIGTERM/SIGINT: idle, stop now (RQ raises StopRequested); busy, finish the job, but
        requeue it and exit if it is still running after WORKER_DRAIN_TIMEOUT_S."""
        super().request_stop(signum, frame)
        if self._drain_timer is None:
            logger.warning("stop requested: finishing the running job for up to %s s", settings.WORKER_DRAIN_TIMEOUT_S)
            self._drain_timer = threading.Timer(settings.WORKER_DRAIN_TIMEOUT_S, self.drain_now)
            self._drain_timer.daemon = True
            self._drain_timer.start()

    def request_force_stop(self, signum, frame):
        """A second signal: requeue the running job now rather than abort it half-way (RQ's cold
        shutdown would fail it and spend a retry)."""
        requested = self._shutdown_requested_date
        if requested is not None and datetime.now(UTC) - requested < timedelta(seconds=1):
            return  # the same stop delivered twice (RQ ignores it too)
        self.drain_now()
        super().request_force_stop(signum, frame)

    def drain_now(self) -> None:
        """Requeue the running GPU run and exit the process; nothing to do once it finished."""
        with self._current_lock:
            task = self._current_task
            if task is None or not requeue_running_task(task):
                return  # finished meanwhile, or a short task that is left to finish
            logger.warning("drain timeout: requeued %s, exiting before it finishes", task.id)
            try:
                self.register_death()
            except Exception:
                logger.exception("could not unregister the worker")
            finally:
                logging.shutdown()
                # Not sys.exit: the job's code is still running in the main thread, and no RQ
                # failure handling (retry, on_failure) may run for a job that is queued again.
                os._exit(0)


def _observe_queue_wait(job, queue_name: str) -> None:
    """Enqueued → started for this attempt (RQ stamps enqueued_at again when a retry is enqueued)."""
    if job.enqueued_at is None:
        return
    enqueued = job.enqueued_at if job.enqueued_at.tzinfo else job.enqueued_at.replace(tzinfo=UTC)
    wait_s = (datetime.now(UTC) - enqueued).total_seconds()
    metrics.QUEUE_WAIT.labels(queue=metrics.bounded(queue_name)).observe(max(0.0, wait_s))


def requeue_running_task(task) -> bool:
    """Put the job of a running GPU run back on its queue (a new attempt); False when the job is no
    longer running or the task is not a whole run (video segments and screenings are short and
    left to finish; the sweeper covers them if the pod is killed)."""
    heartbeat_job_id = task.meta.get("heartbeat_job_id")
    if not heartbeat_job_id or not dispatch.is_run_task(task.id):
        return False
    return lifecycle.job_enqueue_gpu(uuid.UUID(heartbeat_job_id), from_states=[JobState.RUNNING])
