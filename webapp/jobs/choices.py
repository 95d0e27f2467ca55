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
