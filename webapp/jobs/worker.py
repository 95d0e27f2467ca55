"""Visage's RQ worker: one process per GPU, no fork per job, models loaded once and kept warm.

RQ's default worker forks a work-horse per job; a CUDA context does not survive fork and the
models would load per job. SimpleWorker runs jobs in this process instead. While a task that
belongs to a job runs (its id in `meta["heartbeat_job_id"]`, set by dispatch), a heartbeat thread
keeps `Job.heartbeat_at` fresh; a sweeper thread requeues or fails jobs whose worker died
(services.jobs_sweep_stale), so a SIGKILL never leaves a job stuck in `running`.
"""

from __future__ import annotations

import logging
import threading
import uuid

from django.conf import settings
from django.db import close_old_connections, connection
from rq import SimpleWorker

from . import services

logger = logging.getLogger(__name__)

HEARTBEAT_INTERVAL_S = 5.0


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
        try:
            while not self._stop.wait(interval):
                services.job_heartbeat(self.job_id)
        finally:
            connection.close()


class Sweeper:
    """Background thread: every few seconds, requeue or fail jobs whose worker died."""

    def __init__(self, interval_s: float = 10.0):
        self.interval_s = interval_s
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
                counts = services.jobs_sweep_stale()
                if any(counts.values()):
                    logger.warning("swept stale jobs: %s", counts)
            except Exception:  # the sweeper must outlive a database or Redis blip
                logger.exception("stale-job sweep failed")
            finally:
                connection.close()
            self._stop.wait(self.interval_s)


class VisageWorker(SimpleWorker):
    """Runs jobs in-process; a task that belongs to a job gets a heartbeat thread while it runs."""

    def execute_job(self, job, queue):
        close_old_connections()
        try:
            heartbeat_job_id = job.meta.get("heartbeat_job_id")
            if heartbeat_job_id:
                with Heartbeat(uuid.UUID(heartbeat_job_id)):
                    return super().execute_job(job, queue)
            return super().execute_job(job, queue)
        finally:
            close_old_connections()
