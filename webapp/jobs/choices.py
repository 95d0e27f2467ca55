from __future__ import annotations

from django.db import models


class JobState(models.TextChoices):
    CREATED = "created"
    SCREENING = "screening"
    REVIEW = "review"
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    REJECTED = "rejected"
    FAILED = "failed"
    CANCELED = "canceled"


TERMINAL_STATES = frozenset({JobState.SUCCEEDED, JobState.REJECTED, JobState.FAILED, JobState.CANCELED})


class FaceSelection(models.TextChoices):
    ONE = "one", "The largest face"
    MANY = "many", "Every face"
    REFERENCE = "reference", "Faces like the reference face"


class UploadRole(models.TextChoices):
    SOURCE = "source"
    TARGET = "target"


class DirectUploadState(models.TextChoices):
    PENDING = "pending"  # parts are being sent straight to S3
    READY = "ready"  # completed and validated: a job may use it
    USED = "used"  # a job took it (its object is now that job's Upload)
    REJECTED = "rejected"  # the stored file failed validation; deleted
    EXPIRED = "expired"  # abandoned; the multipart upload aborted and the object deleted
