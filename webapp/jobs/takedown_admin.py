"""The takedown-report queue in the admin: reports from /report, oldest open first.

Actions: protect the reported face (a protected identity from the stored embedding, in one step),
take the reported result down (its stored files are deleted), or dismiss: from the list's action
menu, or with the buttons on a report's own page. Moderators need `moderation.review_content`, like
the review queue.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from moderation import takedowns as moderation_takedowns
from moderation.choices import ReportStatus
from moderation.models import TakedownReport

from . import takedowns
from .models import Job


@admin.register(TakedownReport)
class TakedownReportAdmin(admin.ModelAdmin):
    # Short cells (the date without seconds, long names cut with an ellipsis, the relation in a word or
    # two, the job id abbreviated) so the list fits a laptop screen without scrolling sideways.
    list_display = ["id", "reported", "status", "reporter", "relation_short", "job", "has_face", "taken_down"]
    list_filter = ["status", "relation", "result_taken_down"]
    search_fields = ["reporter_name", "reporter_email", "link", "subject_id", "file_sha256"]
    actions = ["protect_face", "take_down_result", "dismiss"]
    readonly_fields = [
        "created_at",
        "reporter_name",
        "reporter_email",
        "relation",
        "details",
        "link",
        "job",
        "file_sha256",
        "file_provenance",
        "face_embedding_kind",
        "has_face",
        "status",
        "result_taken_down",
        "protected_identity",
        "handled_by",
        "handled_at",
    ]
    exclude = ["face_vector", "subject_id"]
    RELATION_SHORT = {
        "self": gettext_lazy("the person"),
        "representative": gettext_lazy("for them"),
        "other": gettext_lazy("other"),
    }
    change_form_template = "admin/moderation/takedownreport/change_form.html"
    # The buttons of a report's own page: (URL name suffix, label), each a POST to decide().
    DECISIONS = {
        "protect": gettext_lazy("Protect the face"),
        "take-down": gettext_lazy("Take the result down"),
        "dismiss": gettext_lazy("Dismiss"),
    }

    def get_urls(self):
        decide = self.admin_site.admin_view(require_POST(self.decide))
        return [
            path("<int:report_id>/decide/<str:decision>/", decide, name="moderation_takedownreport_decide"),
            *super().get_urls(),
        ]

    def decide(self, request, report_id: int, decision: str):
        """One button of the report's page: protect, take down or dismiss this report."""
        if not self.has_review_permission(request) or decision not in self.DECISIONS:
            raise PermissionDenied
        report = get_object_or_404(TakedownReport, pk=report_id)
        {"protect": self._protect, "take-down": self._take_down, "dismiss": self._dismiss}[decision](
            request, report
        )
        return redirect("admin:moderation_takedownreport_change", report.pk)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        decisions = (
            [
                {
                    "label": label,
                    "url": reverse("admin:moderation_takedownreport_decide", args=[object_id, key]),
                    "key": key,
                }
                for key, label in self.DECISIONS.items()
            ]
            if self.has_review_permission(request)
            else []
        )
        return super().change_view(
            request, object_id, form_url, {**(extra_context or {}), "decisions": decisions}
        )

    def get_queryset(self, request):
        return super().get_queryset(request).order_by("status", "created_at")

    def has_add_permission(self, request) -> bool:
        return False

    def has_review_permission(self, request) -> bool:
        return request.user.has_perm("moderation.review_content")

    @admin.display(description=gettext_lazy("reported"), ordering="created_at")
    def reported(self, report: TakedownReport) -> str:
        return report.created_at.strftime("%Y-%m-%d %H:%M")

    @admin.display(description=gettext_lazy("reporter"), ordering="reporter_name")
    def reporter(self, report: TakedownReport) -> str:
        name = report.reporter_name
        return format_html('<span class="visage-one-line" title="{}">{}</span>', name, name)

    @admin.display(description=gettext_lazy("relation"), ordering="relation")
    def relation_short(self, report: TakedownReport) -> str:
        return self.RELATION_SHORT.get(report.relation, report.relation)

    @admin.display(description=gettext_lazy("taken down"), boolean=True, ordering="result_taken_down")
    def taken_down(self, report: TakedownReport) -> bool:
        return report.result_taken_down

    @admin.display(description=gettext_lazy("job"))
    def job(self, report: TakedownReport) -> str:
        if not report.subject_id:
            return "—"
        url = reverse("admin:webapp_job_change", args=[report.subject_id])
        return format_html(
            '<a href="{}" title="{}">{}…</a>', url, report.subject_id, str(report.subject_id)[:8]
        )

    @admin.display(description=gettext_lazy("face"), boolean=True)
    def has_face(self, report: TakedownReport) -> bool:
        return bool(report.face_vector)

    def _protect(self, request, report: TakedownReport) -> bool:
        try:
            moderation_takedowns.takedown_report_protect_face(report=report, actor=request.user)
        except moderation_takedowns.ReportAlreadyDecided:
            return self._decided_first(request, report)
        except ValidationError as exc:
            messages.warning(
                request, _("Report #%(report)s: %(reason)s") % {"report": report.pk, "reason": " ".join(exc.messages)}
            )
            return False
        messages.success(
            request,
            _("Report #%(report)s: the face is protected; swaps of it are now refused.") % {"report": report.pk},
        )
        return True

    def _take_down(self, request, report: TakedownReport) -> bool:
        if not (report.subject_id and Job.objects.filter(id=report.subject_id).exists()):
            messages.warning(request, _("Report #%(report)s names no result of ours.") % {"report": report.pk})
            return False
        with transaction.atomic():  # decided and taken down together: a failed take-down leaves it open
            if not moderation_takedowns.takedown_report_close(
                report=report, actor=request.user, status=ReportStatus.RESOLVED, taken_down=True
            ):
                return self._decided_first(request, report)
            takedowns.job_take_down(job_id=report.subject_id)
        messages.success(request, _("Report #%(report)s: the result was taken down.") % {"report": report.pk})
        return True

    def _dismiss(self, request, report: TakedownReport) -> bool:
        if not moderation_takedowns.takedown_report_close(
            report=report, actor=request.user, status=ReportStatus.DISMISSED
        ):
            return self._decided_first(request, report)
        messages.success(request, _("Report #%(report)s was dismissed.") % {"report": report.pk})
        return True

    def _decided_first(self, request, report: TakedownReport) -> bool:
        """A decision on a report someone already decided (another moderator, another tab): theirs stands."""
        messages.warning(
            request,
            _("Report #%(report)s was already decided (%(status)s): that decision stands.")
            % {"report": report.pk, "status": report.get_status_display()},
        )
        return False

    @admin.action(description=gettext_lazy("Protect the reported face (embedding only)"), permissions=["review"])
    def protect_face(self, request, queryset) -> None:
        for report in queryset:
            self._protect(request, report)

    @admin.action(description=gettext_lazy("Take the reported result down"), permissions=["review"])
    def take_down_result(self, request, queryset) -> None:
        for report in queryset:
            self._take_down(request, report)

    @admin.action(description=gettext_lazy("Dismiss"), permissions=["review"])
    def dismiss(self, request, queryset) -> None:
        for report in queryset:
            self._dismiss(request, report)
