from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_noop


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

# What a person reads for each state, translated where shown (gettext_noop: the table itself is plain English).
STATE_LABELS = {
    JobState.CREATED: gettext_noop("Submitted"),
    JobState.SCREENING: gettext_noop("Checking"),
    JobState.REVIEW: gettext_noop("In review"),
    JobState.QUEUED: gettext_noop("Queued"),
    JobState.RUNNING: gettext_noop("Processing"),
    JobState.SUCCEEDED: gettext_noop("Done"),
    JobState.REJECTED: gettext_noop("Rejected"),
    JobState.FAILED: gettext_noop("Failed"),
    JobState.CANCELED: gettext_noop("Canceled"),
}


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
