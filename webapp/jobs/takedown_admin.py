"""The takedown-report queue in the admin: reports from /report, oldest open first.

Actions: protect the reported face (a protected identity from the stored embedding, in one step),
take the reported result down (its stored files are deleted), or dismiss. Moderators need
`moderation.review_content`, like the review queue.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import format_html

from moderation import takedowns as moderation_takedowns
from moderation.choices import ReportStatus
from moderation.models import TakedownReport

from . import takedowns
from .models import Job


@admin.register(TakedownReport)
class TakedownReportAdmin(admin.ModelAdmin):
    list_display = ["id", "created_at", "status", "reporter_name", "relation", "job", "has_face", "result_taken_down"]
    list_filter = ["status", "relation", "result_taken_down"]
    search_fields = ["reporter_name", "reporter_email", "link", "subject_id", "file_sha256"]
    actions = ["protect_face", "take_down_result", "dismiss"]
    readonly_fields = [
        "created_at", "reporter_name", "reporter_email", "relation", "details", "link", "job", "file_sha256",
        "file_provenance", "face_embedding_kind", "has_face", "status", "result_taken_down", "protected_identity",
        "handled_by", "handled_at",
    ]
    exclude = ["face_vector", "subject_id"]

    def get_queryset(self, request):
        return super().get_queryset(request).order_by("status", "created_at")

    def has_add_permission(self, request) -> bool:
        return False

    def has_review_permission(self, request) -> bool:
        return request.user.has_perm("moderation.review_content")

    @admin.display(description="job")
    def job(self, report: TakedownReport) -> str:
        if not report.subject_id:
            return "—"
        url = reverse("admin:webapp_job_change", args=[report.subject_id])
        return format_html('<a href="{}">{}</a>', url, report.subject_id)

    @admin.display(description="face", boolean=True)
    def has_face(self, report: TakedownReport) -> bool:
        return bool(report.face_vector)

    @admin.action(description="Protect the reported face (embedding only)", permissions=["review"])
    def protect_face(self, request, queryset) -> None:
        done = 0
        for report in queryset:
            try:
                moderation_takedowns.takedown_report_protect_face(report=report, actor=request.user)
                done += 1
            except ValidationError as exc:
                messages.warning(request, f"Report #{report.pk}: {' '.join(exc.messages)}")
        self.message_user(request, f"Protected the face of {done} report(s); swaps of it are now refused.")

    @admin.action(description="Take the reported result down", permissions=["review"])
    def take_down_result(self, request, queryset) -> None:
        done = 0
        for report in queryset:
            if report.subject_id and Job.objects.filter(id=report.subject_id).exists():
                takedowns.job_take_down(job_id=report.subject_id)
                moderation_takedowns.takedown_report_close(
                    report=report, actor=request.user, status=ReportStatus.RESOLVED, taken_down=True
                )
                done += 1
            else:
                messages.warning(request, f"Report #{report.pk} names no result of ours.")
        self.message_user(request, f"Took down {done} result(s).")

    @admin.action(description="Dismiss", permissions=["review"])
    def dismiss(self, request, queryset) -> None:
        for report in queryset:
            moderation_takedowns.takedown_report_close(report=report, actor=request.user, status=ReportStatus.DISMISSED)
        self.message_user(request, f"Dismissed {queryset.count()} report(s).")
