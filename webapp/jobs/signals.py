"""Rows other code writes that change what a job shows or owns.

A direct upload's row deleted with its owner (the admin deletes a user: the rows cascade, and no
service runs) takes its stored file and its unfinished multipart upload with it: nothing could
find them afterwards (the expiry sweep works from the rows, the orphan sweep from job ids), so a
deleted user's photos stayed in the bucket for ever."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.db.models.signals import post_delete, post_save

from billing.choices import EntryKind
from billing.models import LedgerEntry

from . import events
from .choices import DirectUploadState
from .models import DirectUpload, Job
from .services import direct_uploads

STORED = (DirectUploadState.PENDING, DirectUploadState.READY)  # a used one's file is its job's Upload


def _direct_upload_deleted(sender, instance: DirectUpload, **kwargs) -> None:
    if instance.state in STORED:
        transaction.on_commit(lambda: direct_uploads.direct_upload_discard_stored(instance), robust=True)


def _refunded(sender, instance: LedgerEntry, created: bool = False, **kwargs) -> None:
    """A refund (the billing admin's action) changes the job's cost and sentence: its version moves
    on, so a conditional GET is no 304 of "paid" and the cached body is not served again, and its
    clients hear of it (billing knows nothing of jobs' versions and events)."""
    if created and instance.kind == EntryKind.REFUND and instance.job_id:
        Job.objects.filter(id=instance.job_id).update(version=F("version") + 1)
        events.job_changed(instance.job_id)


def connect() -> None:
    post_delete.connect(_direct_upload_deleted, sender=DirectUpload, dispatch_uid="visage-direct-upload-deleted")
    post_save.connect(_refunded, sender=LedgerEntry, dispatch_uid="visage-job-refunded")
