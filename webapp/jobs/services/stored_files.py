"""Deleting what a job stored in S3: its uploaded originals (once it ends), its result, and
originals whose submit failed after they landed (no job row)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from webapp.media import storage

from ..choices import TERMINAL_STATES
from ..models import Job, Upload, result_keys


def uploads_purge(job: Job) -> None:
    """Delete the job's originals and any intermediate parts from S3 (idempotent) and record when:
    what lies under the job's prefix (a plain submit's originals, its face analyses) and the
    originals of a resumable upload, which lie elsewhere, in one S3 request."""
    keys = set(storage.list_keys(settings.S3_UPLOADS_BUCKET, prefix=f"{job.owner_id}/{job.id}/"))
    left = [upload for upload in (job.source, job.target, *job.extra_sources.all()) if upload.deleted_at is None]
    storage.delete_many(settings.S3_UPLOADS_BUCKET, keys | {upload.s3_key for upload in left})
    if left:
        Upload.objects.filter(id__in=[upload.id for upload in left], deleted_at__isnull=True).update(
            deleted_at=timezone.now()
        )


def job_result_delete(job: Job) -> None:
    """Delete the job's stored result, if it has one."""
    if job.result_key:
        result_discard(result_key=job.result_key)


def result_discard(*, result_key: str) -> None:
    """Delete a stored result and everything stored beside it (models.result_keys): a result no job
    will show (canceled, superseded by a newer attempt), deleted, expired or taken down."""
    storage.delete_many(settings.S3_RESULTS_BUCKET, result_keys(result_key))


def uploads_sweep_orphans(*, now: datetime | None = None) -> int:
    """Delete uploaded objects that belong to no job, stored more than UPLOAD_ORPHAN_GRACE_S ago.

    Every object of a job lives under `<owner>/<job id>/`, and the job's row is committed right
    after its originals are stored. A submit that failed in between (S3 timed out, the process
    died) leaves objects without a row: a user's face kept by nobody. The grace period leaves a
    submit in flight alone. Objects of a job that has ended go too: its uploads were purged when it
    ended, so whatever is there was written by a step racing that end (screening's face analysis
    saved just after the user canceled). Also deleted: face analyses that versions before the job's one object
    (jobs.face_analysis) stored beside a direct upload (`<owner>/direct/<id>.face-analysis/...`),
    which no purge deleted. Returns how many objects were deleted.
    """
    now = now or timezone.now()
    before = now - timedelta(seconds=settings.UPLOAD_ORPHAN_GRACE_S)
    by_job: dict[uuid.UUID, list[str]] = {}
    deleted = 0
    for key in storage.list_stored_before(settings.S3_UPLOADS_BUCKET, before):
        parts = key.split("/")
        if len(parts) >= 3 and parts[1] == "direct" and ".face-analysis/" in key:
            storage.delete(settings.S3_UPLOADS_BUCKET, key)
            deleted += 1
            continue
        try:
            job_id = uuid.UUID(parts[1]) if len(parts) >= 3 else None
        except ValueError:
            job_id = None
        if job_id is not None:  # not ours otherwise: left alone
            by_job.setdefault(job_id, []).append(key)
    going = set(
        Job.objects.filter(id__in=list(by_job)).exclude(state__in=TERMINAL_STATES).values_list("id", flat=True)
    )
    for job_id, keys in by_job.items():
        if job_id in going:
            continue
        for key in keys:
            storage.delete(settings.S3_UPLOADS_BUCKET, key)
            deleted += 1
    return deleted
