"""A direct upload's row deleted with its owner (the admin deletes a user: the rows cascade, and no
service runs) takes its stored file and its unfinished multipart upload with it: nothing could
find them afterwards (the expiry sweep works from the rows, the orphan sweep from job ids), so a
deleted user's photos stayed in the bucket for ever."""

from __future__ import annotations

from django.db import transaction
from django.db.models.signals import post_delete

from .choices import DirectUploadState
from .models import DirectUpload
from .services import direct_uploads

STORED = (DirectUploadState.PENDING, DirectUploadState.READY)  # a used one's file is its job's Upload


def _direct_upload_deleted(sender, instance: DirectUpload, **kwargs) -> None:
    if instance.state in STORED:
        transaction.on_commit(lambda: direct_uploads.direct_upload_discard_stored(instance), robust=True)


def connect() -> None:
    post_delete.connect(_direct_upload_deleted, sender=DirectUpload, dispatch_uid="visage-direct-upload-deleted")
