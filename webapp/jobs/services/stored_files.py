"""Deleting what a job stored in S3: its uploaded originals (once it ends) and its result."""

from __future__ import annotations

from django.conf import settings
from django.utils import timezone

from webapp.media import storage

from ..models import Job, Upload, result_keys


def uploads_purge(job: Job) -> None:
    """Delete the job's originals and any intermediate parts from S3 (idempotent) and record when."""
    for key in storage.list_keys(settings.S3_UPLOADS_BUCKET, prefix=f"{job.owner_id}/{job.id}/"):
        storage.delete(settings.S3_UPLOADS_BUCKET, key)
    for upload in (job.source, job.target, *job.extra_sources.all()):
        if upload.deleted_at is None:
            storage.delete(settings.S3_UPLOADS_BUCKET, upload.s3_key)
            Upload.objects.filter(id=upload.id, deleted_at__isnull=True).update(deleted_at=timezone.now())


def job_result_delete(job: Job) -> None:
    """Delete the job's stored result, if it has one."""
    if job.result_key:
        result_discard(result_key=job.result_key)


def result_discard(*, result_key: str) -> None:
    """Delete a stored result and everything stored beside it (models.result_keys): a result no job
    will show (canceled, superseded by a newer attempt), deleted, expired or taken down."""
    for key in result_keys(result_key):
        storage.delete(settings.S3_RESULTS_BUCKET, key)
