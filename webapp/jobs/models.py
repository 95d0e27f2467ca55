"""Upload and Job: the rows that are the source of truth for every swap."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from billing.choices import Mode, Resolution
from webapp.media.choices import MediaKind
from webapp.media.thumbnails import PREVIEW_MAX_SIDE_PX
from webapp.notifications.models import PushDevice

from .choices import DirectUploadState, FaceSelection, JobState, UploadRole


class Upload(models.Model):
    """An original file a user sent, stored privately in the uploads bucket until its job ends."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="uploads")
    role = models.CharField(max_length=16, choices=UploadRole.choices)
    s3_key = models.CharField(max_length=512)
    sha256 = models.CharField(max_length=64, db_index=True)
    media_type = models.CharField(max_length=64)  # sniffed from the content, never from the filename
    kind = models.CharField(max_length=16, choices=MediaKind.choices, default=MediaKind.IMAGE)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    frames = models.PositiveIntegerField(default=1)
    fps = models.FloatField(null=True, blank=True)
    duration_seconds = models.FloatField(null=True, blank=True)
    has_audio = models.BooleanField(default=False)
    size_bytes = models.PositiveBigIntegerField()
    # The file's name on the uploader's device, for searching the gallery; the object in
    # S3 is stored under our own key. Uploads made before names were kept have none.
    original_name = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    deleted_at = models.DateTimeField(null=True, blank=True)  # set once the object is gone from S3

    def __str__(self) -> str:
        return f"{self.role} {self.media_type} {self.width}×{self.height}"



class DirectUpload(models.Model):
    """A file the app sends in parts straight to S3 (presigned multipart upload), validated once
    complete; a job then names it instead of carrying the file. Never billed by itself."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="direct_uploads")
    kind = models.CharField(max_length=16, choices=MediaKind.choices)  # as declared; checked on the content
    content_type = models.CharField(max_length=64)  # as declared; the content's own type is in `media`
    size_bytes = models.PositiveBigIntegerField()  # as declared; the stored object must match
    sha256 = models.CharField(max_length=64)  # as declared; the stored object must match
    s3_key = models.CharField(max_length=512)
    s3_upload_id = models.CharField(max_length=512)
    part_size_bytes = models.PositiveBigIntegerField()
    part_count = models.PositiveIntegerField()
    state = models.CharField(max_length=16, choices=DirectUploadState.choices, default=DirectUploadState.PENDING)
    media = models.JSONField(default=dict, blank=True)  # what validation found (type, size, frames, …)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["state", "expires_at"])]

    def __str__(self) -> str:
        return f"Direct upload {self.id} ({self.state})"

class Job(models.Model):
    """One face swap. The row is the source of truth; its id is also the RQ job id."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="jobs")
    source = models.ForeignKey(Upload, on_delete=models.PROTECT, related_name="+")
    target = models.ForeignKey(Upload, on_delete=models.PROTECT, related_name="+")
    # More photos of the same person: the engine averages the identity over all of them.
    extra_sources = models.ManyToManyField(Upload, related_name="+", blank=True)

    # Options, echoed back in the API.
    mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.STANDARD)
    resolution = models.CharField(max_length=16, choices=Resolution.choices, default=Resolution.P720)
    faces = models.CharField(max_length=16, choices=FaceSelection.choices, default=FaceSelection.ONE)
    face_index = models.PositiveSmallIntegerField(null=True, blank=True)
    reference_face_index = models.PositiveSmallIntegerField(null=True, blank=True)
    # Different people into different faces: [{"face": target face index, "source": source photo index}].
    # When set, the source photos are different people (not averaged).
    face_sources = models.JSONField(default=list, blank=True)
    webhook_url = models.URLField(max_length=2000, blank=True)

    state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.CREATED, db_index=True)
    progress = models.PositiveSmallIntegerField(default=0)  # 0–100
    # Raised by every write that changes what the API shows (transitions, progress, takedowns):
    # orders the job's events and keys its ETag (webapp/jobs/events.py).
    version = models.PositiveIntegerField(default=0)
    error_code = models.CharField(max_length=64, blank=True)
    error_message = models.TextField(blank=True)
    queue = models.CharField(max_length=32, default="default")  # the GPU queue its owner's plan allows
    attempts = models.PositiveSmallIntegerField(default=0)

    quote = models.JSONField(default=dict, blank=True)
    frames_processed = models.PositiveIntegerField(null=True, blank=True)
    processed_width = models.PositiveIntegerField(null=True, blank=True)
    processed_height = models.PositiveIntegerField(null=True, blank=True)
    gpu_seconds = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    wall_seconds = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    stage_ms = models.JSONField(default=dict, blank=True)
    cost = models.DecimalField(max_digits=14, decimal_places=4, null=True, blank=True)
    engine_notes = models.JSONField(default=dict, blank=True)  # swapper used, enhancer skipped, …
    # The signed result's C2PA Content Credentials as read back after signing.
    provenance = models.JSONField(default=dict, blank=True)

    # The uploader's statement that they may use the source face(s): when, which wording, from where
    # (the uploader is `owner`). Jobs created before consent was asked for have no consent_at.
    consent_at = models.DateTimeField(null=True, blank=True)
    consent_version = models.CharField(max_length=64, blank=True)
    consent_text = models.TextField(blank=True)
    consent_channel = models.CharField(max_length=8, blank=True)  # "api" or "site"

    result_key = models.CharField(max_length=512, blank=True)
    result_media_type = models.CharField(max_length=64, blank=True)
    result_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    result_visible = models.BooleanField(default=False)  # false until output moderation passed
    media_deleted_at = models.DateTimeField(null=True, blank=True)  # results and uploads purged

    favourite = models.BooleanField(default=False)  # starred in the owner's gallery

    idempotency_key = models.CharField(max_length=255, blank=True)
    request_hash = models.CharField(max_length=64, blank=True)

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "idempotency_key"], condition=~Q(idempotency_key=""), name="job_idempotency_key_per_owner"
            ),
            models.CheckConstraint(condition=Q(progress__lte=100), name="job_progress_at_most_100"),
        ]
        indexes = [models.Index(fields=["state", "heartbeat_at"])]

    def __str__(self) -> str:
        return f"Job {self.id} ({self.state})"

    @property
    def before_key(self) -> str:
        """The processed target kept beside the result for the before/after view."""
        return before_key_for(self.result_key) if self.result_key else ""

    @property
    def thumbnail_key(self) -> str:
        return thumbnail_key_for(self.result_key) if self.result_key else ""

    @property
    def after_key(self) -> str:
        """The before/after view's "after": the result itself when it is a web-size JPEG, else its copy."""
        if not self.result_key:
            return ""
        if result_is_web_size(self.result_media_type, self.processed_width or 0, self.processed_height or 0):
            return self.result_key
        return after_key_for(self.result_key)


class WebhookDelivery(models.Model):
    """The outbox of job webhooks: one row per event, written in the transaction that moved the job.

    The row, not Redis, says a webhook is owed: the enqueue after commit may hit a Redis outage, and
    the sweeper (services/maintenance.py) enqueues every undelivered row again. `attempts` counts
    every delivery try whoever started it, so RQ's retries and the sweeper's re-enqueues together
    never try more than WEBHOOK_MAX_ATTEMPTS times.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="webhook_deliveries")
    event = models.CharField(max_length=32)  # "job.succeeded", "job.failed", …
    created_at = models.DateTimeField(auto_now_add=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    delivered_at = models.DateTimeField(null=True, blank=True)
    abandoned_at = models.DateTimeField(null=True, blank=True)  # attempts spent
    last_error = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "event"], name="webhook_delivery_one_per_event")]
        indexes = [
            models.Index(
                fields=["created_at"],
                condition=Q(delivered_at__isnull=True, abandoned_at__isnull=True),
                name="webhook_delivery_pending",
            )
        ]

    def __str__(self) -> str:
        return f"{self.event} of job {self.job_id}"


class PushDelivery(models.Model):
    """The outbox of push notifications: one row per (job, push device), written in the transaction
    that moved the job to its final state, like WebhookDelivery (same queue, sweeper and rule:
    `attempts` counts every try whoever started it). The unique pair is the idempotency key: a
    retried transition or a re-enqueue never owes a second push to a device. A device the provider
    calls invalid is deleted, and its rows with it.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)  # the push's apns-id
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="push_deliveries")
    device = models.ForeignKey(PushDevice, on_delete=models.CASCADE, related_name="deliveries")
    state = models.CharField(max_length=16, choices=JobState.choices)  # the final state it announces
    created_at = models.DateTimeField(auto_now_add=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    delivered_at = models.DateTimeField(null=True, blank=True)
    abandoned_at = models.DateTimeField(null=True, blank=True)  # attempts spent
    last_error = models.TextField(blank=True)

    class Meta:
        verbose_name_plural = "push deliveries"
        constraints = [models.UniqueConstraint(fields=["job", "device"], name="push_delivery_one_per_device")]
        indexes = [
            models.Index(
                fields=["created_at"],
                condition=Q(delivered_at__isnull=True, abandoned_at__isnull=True),
                name="push_delivery_pending",
            )
        ]

    def __str__(self) -> str:
        return f"push of job {self.job_id} ({self.state}) to device {self.device_id}"


class ShareLink(models.Model):
    """An unlisted, expiring, revocable public page for one job's result.

    The token is never stored: `token_sha256` finds the link from its URL, and `nonce` (random) is
    what the token is derived from with the server's secret key (webapp.jobs.sharing), so the owner
    can be shown their link again while a copy of the database alone cannot open any link.
    """

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="share_links")
    nonce = models.CharField(max_length=64)
    token_sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    view_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Share link of job {self.job_id}"


def before_key_for(result_key: str) -> str:
    return result_key.rsplit(".", 1)[0] + ".before.jpg"


def thumbnail_key_for(result_key: str) -> str:
    """The gallery's small WebP of the result (a video's poster), stored beside it (results made before thumbnails have none)."""
    return result_key.rsplit(".", 1)[0] + ".thumb.webp"


def after_key_for(result_key: str) -> str:
    """A web-size JPEG of the result (a video's middle frame) for the site's before/after view and
    the moderators' desk: marked, labelled and signed like the result (steps.common.store_result).
    Not stored for a result that is one already (result_is_web_size): Job.after_key is then the result."""
    return result_key.rsplit(".", 1)[0] + ".after.jpg"


def result_is_web_size(media_type: str, width: int, height: int) -> bool:
    """Whether the result serves as its own web-size copy: a JPEG photo no larger than the view's
    picture. Its copy would be the same pixels, marked, labelled and signed the same way, at JPEG
    quality 85 instead of the result's 95: an encode, a signature and an S3 object a job, for a
    view that loads 1.5-1.9x the bytes (a 720p photo: 290 instead of 154 KB)."""
    return media_type == "image/jpeg" and 0 < max(width, height) <= PREVIEW_MAX_SIDE_PX


def result_keys(result_key: str) -> list[str]:
    """The result and every object stored beside it: whatever deletes one deletes them all."""
    return [result_key, before_key_for(result_key), after_key_for(result_key), thumbnail_key_for(result_key)]
