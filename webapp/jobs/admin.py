"""Jobs and uploads in the Django admin — including the moderation review queue.

The review queue is the Job changelist filtered to state `review` ("Awaiting review"): each row
shows thumbnails (presigned S3 URLs of the uploads, or of the held result when the OUTPUT was
flagged), the scores and reasons from moderation's verdict, and two actions. Approving calls
services.job_review_approve (inputs → GPU queue; a held result is published); rejecting calls
services.job_review_reject (hold released, uploads deleted). Both are recorded (reviewer, time)
on the moderation Verdict. Moderators need `moderation.review_content` (the `moderator` group).
"""

from __future__ import annotations

import csv
import io
import logging

from django.conf import settings
from django.contrib import admin, messages
from django.http import HttpResponse
from django.utils.html import format_html, format_html_join

from moderation import selectors as moderation_selectors
from moderation import services as moderation_services
from webapp.media import storage

from . import services
from .choices import JobState
from .models import Job, Upload

logger = logging.getLogger(__name__)


class ReviewQueueFilter(admin.SimpleListFilter):
    title = "moderation"
    parameter_name = "queue"

    def lookups(self, request, model_admin):
        return [("review", "Awaiting review")]

    def queryset(self, request, queryset):
        if self.value() == "review":
            return queryset.filter(state=JobState.REVIEW).order_by("created_at")  # oldest first
        return queryset


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "owner", "state", "thumbnails", "moderation", "queue", "created_at"]
    list_filter = [ReviewQueueFilter, "state", "mode", "queue"]
    search_fields = ["id", "owner__username", "owner__email"]
    list_select_related = ["owner", "source", "target"]
    actions = ["approve_review", "reject_review", "export_consent_csv"]
    readonly_fields = ["thumbnails", "moderation"]
    fieldsets = [
        ("Moderation", {"fields": ["thumbnails", "moderation"]}),
        (
            "Job",
            {"fields": ["owner", "state", "progress", "error_code", "error_message", "queue", "attempts"]},
        ),
        ("Options", {"fields": ["mode", "resolution", "faces", "face_index", "reference_face_index"]}),
        (
            "Result",
            {"fields": ["result_key", "result_visible", "cost", "gpu_seconds", "wall_seconds", "stage_ms"]},
        ),
        ("Consent and provenance", {"fields": ["consent_at", "consent_version", "consent_channel", "consent_text",
                                               "provenance"]}),
        ("Times", {"fields": ["created_at", "queued_at", "started_at", "completed_at"]}),
    ]

    def get_readonly_fields(self, request, obj=None):
        # Every change to a job goes through services (guarded transitions); the form only shows.
        return [f for group in self.fieldsets for f in group[1]["fields"]]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # deleting must purge S3 too: users delete through the API/site (job_delete)

    def has_review_permission(self, request) -> bool:
        return request.user.has_perm("moderation.review_content")

    @admin.display(description="images")
    def thumbnails(self, job: Job) -> str:
        if job.state != JobState.REVIEW:
            return "—"
        images = _review_images(job)
        if not images:
            return "(images no longer stored)"
        return format_html_join(
            " ",
            '<a href="{0}" target="_blank" rel="noopener"><img src="{0}" alt="{1}" title="{1}" '
            'style="max-height:96px;max-width:128px"></a>',
            images,
        )

    @admin.display(description="moderation verdict")
    def moderation(self, job: Job) -> str:
        verdict = moderation_selectors.verdict_for_review(job.id)
        if verdict is None:
            return "—"
        reasons = moderation_selectors.verdict_reasons(verdict)
        return format_html(
            "<b>{}</b> {} ({}){}<ul style='margin:0'>{}</ul>",
            verdict.decision,
            verdict.code,
            verdict.stage,
            format_html(" · reviewed: {} by {}", verdict.review_decision, verdict.reviewed_by)
            if verdict.reviewed_at
            else "",
            format_html_join("", "<li>{}</li>", ((r,) for r in reasons)),
        )

    @admin.action(description="Approve selected jobs in review", permissions=["review"])
    def approve_review(self, request, queryset) -> None:
        approved = 0
        for job_id in queryset.filter(state=JobState.REVIEW).values_list("id", flat=True):
            if services.job_review_approve(job_id):
                moderation_services.verdict_record_review(
                    subject_id=job_id, reviewer=request.user, approved=True
                )
                approved += 1
        self.message_user(request, f"Approved {approved} job(s).", messages.SUCCESS)

    @admin.action(description="Reject selected jobs in review", permissions=["review"])
    def reject_review(self, request, queryset) -> None:
        rejected = 0
        for job_id in queryset.filter(state=JobState.REVIEW).values_list("id", flat=True):
            if services.job_review_reject(job_id, message=moderation_services.REVIEW_REJECT_MESSAGE):
                moderation_services.verdict_record_review(
                    subject_id=job_id, reviewer=request.user, approved=False
                )
                rejected += 1
        self.message_user(
            request, f"Rejected {rejected} job(s); their holds were released.", messages.SUCCESS
        )


    @admin.action(description="Export consent records of selected jobs (CSV)")
    def export_consent_csv(self, request, queryset) -> HttpResponse:
        response = HttpResponse(consent_csv(queryset.select_related("owner")), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="visage-consent.csv"'
        return response


CONSENT_COLUMNS = ["job_id", "created_at", "user_id", "username", "consent_at", "consent_version", "channel", "wording"]


def consent_csv(jobs) -> str:
    """Who stated, when, under which wording, that they may use the faces of each job (issue 19)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CONSENT_COLUMNS)
    for job in jobs:
        writer.writerow([
            job.id, job.created_at.isoformat(), job.owner_id, job.owner.get_username(),
            job.consent_at.isoformat() if job.consent_at else "", job.consent_version, job.consent_channel,
            job.consent_text,
        ])
    return out.getvalue()


def _review_images(job: Job) -> list[tuple[str, str]]:
    """(presigned URL, label) for what the moderator must look at."""
    try:
        if job.result_key:  # the output was flagged: show the held result (and what it was made from)
            return [
                (storage.presigned_get(settings.S3_RESULTS_BUCKET, job.result_key), "result"),
                (storage.presigned_get(settings.S3_RESULTS_BUCKET, job.before_key), "target (processed)"),
            ]
        return [
            (storage.presigned_get(settings.S3_UPLOADS_BUCKET, upload.s3_key), upload.role)
            for upload in (job.source, job.target)
            if upload.deleted_at is None
        ]
    except Exception:  # a thumbnail must never break the queue page
        logger.exception("could not presign review images for job %s", job.id)
        return []


@admin.register(Upload)
class UploadAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "owner",
        "role",
        "media_type",
        "width",
        "height",
        "size_bytes",
        "created_at",
        "deleted_at",
    ]
    list_filter = ["role", "kind", "media_type"]
    search_fields = ["id", "sha256", "owner__username"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in Upload._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False
