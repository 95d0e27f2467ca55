"""Maintenance: the sweeper that moves on jobs nothing else will move (every worker, and
`manage.py visage_sweep`), and the purge of expired results (`manage.py visage_purge_results`,
a daily CronJob)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_noop

from .. import dispatch, events, sharing
from ..choices import JobState
from ..models import Job
from ..states import transition
from .lifecycle import job_enqueue_gpu, job_fail
from .stored_files import job_result_delete


def jobs_sweep_stale(*, now: datetime | None = None) -> dict[str, int]:
    """Move on every job that nothing will move: the database row is the outbox.

    A job's state says which task must exist in RQ (created → its screening, queued → its GPU
    run, running → a live worker's heartbeat). When an enqueue was lost (Redis down at submit or
    after screening) or a worker died, this enqueues the task again under the same deterministic
    RQ id, requeues the job, or fails it once its attempts are spent. It runs in every worker and
    from `manage.py visage_sweep`, so a Redis or worker fault delays a job; it never strands it
    or its credits. The webhooks final states owe are swept beside it (webhook_outbox).
    """
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)
    grace = now - timedelta(seconds=settings.ENQUEUE_GRACE_S)
    counts = {"requeued": 0, "failed": 0, "rescreened": 0, "reenqueued": 0}
    running = Job.objects.filter(state=JobState.RUNNING, heartbeat_at__lt=stale)
    for job_id, attempts, queue_name in running.values_list("id", "attempts", "queue"):
        if dispatch.children_pending(job_id, attempts, queue_name):
            continue  # a segmented video whose segments wait in the queue: alive, not silent
        if attempts < settings.JOB_MAX_ATTEMPTS:
            if job_enqueue_gpu(job_id, from_states=[JobState.RUNNING]):
                counts["requeued"] += 1
        elif job_fail(
            job_id,
            code="worker_lost",
            message=gettext_noop("The worker processing this job stopped responding."),
            from_states=[JobState.RUNNING],
        ):
            counts["failed"] += 1
    # Screening that never finished (moderation worker died): screen again.
    screening = Job.objects.filter(state=JobState.SCREENING, created_at__lt=stale)
    for job_id in screening.values_list("id", flat=True):
        if dispatch.screening_pending(job_id):
            continue
        if transition(job_id, from_states=[JobState.SCREENING], to_state=JobState.CREATED):
            dispatch.enqueue_screening(job_id)
            counts["rescreened"] += 1
    # Enqueues that never happened (Redis down when the job was committed).
    for job_id in Job.objects.filter(state=JobState.CREATED, created_at__lt=grace).values_list(
        "id", flat=True
    ):
        if not dispatch.screening_pending(job_id):
            dispatch.enqueue_screening(job_id)
            counts["reenqueued"] += 1
    queued = Job.objects.filter(state=JobState.QUEUED, queued_at__lt=grace)
    for job_id, attempts, queue_name in queued.values_list("id", "attempts", "queue"):
        if not dispatch.run_pending(job_id, attempts, queue_name):
            dispatch.enqueue_gpu(job_id, queue_name, attempt=attempts + 1)
            counts["reenqueued"] += 1
    return counts


def results_purge_expired(*, now: datetime | None = None) -> int:
    """Delete stored results older than the retention period; the job row stays and says so."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.RESULT_RETENTION_DAYS)
    purged = 0
    for job in Job.objects.filter(completed_at__lt=cutoff, media_deleted_at__isnull=True).exclude(
        result_key=""
    ):
        job_result_delete(job)
        sharing.share_links_revoke(job=job)
        moved = Job.objects.filter(id=job.id, media_deleted_at__isnull=True).update(
            media_deleted_at=now, version=F("version") + 1
        )
        if moved:
            events.job_changed(job.id)
        purged += moved
    return purged
