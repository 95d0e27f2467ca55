"""Jobs and uploads in the Django admin — including the moderation review queue.

The review queue is the Job changelist filtered to state `review` ("Awaiting review"): each row
shows thumbnails (presigned S3 URLs of the uploads, or of the held result when the OUTPUT was
flagged), the scores and reasons from moderation's verdict, and two actions. Approving calls
lifecycle.job_review_approve (inputs → GPU queue; a held result is published); rejecting calls
lifecycle.job_review_reject (hold released, uploads deleted). Both are recorded (reviewer, time)
on the moderation Verdict. Moderators need `moderation.review_content` (the `moderator` group).
"""

from __future__ import annotations

import csv
import datetime
import io
import logging

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseBadRequest, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from billing.exports import spreadsheet_safe
from moderation import reviews as moderation_reviews
from moderation import selectors as moderation_selectors
from moderation import services as moderation_services
from webapp.media import storage

from . import selectors as job_selectors
from .choices import JobState
from .models import Job, ShareLink, Upload
from .services import lifecycle

logger = logging.getLogger(__name__)


class ReviewQueueFilter(admin.SimpleListFilter):
    title = gettext_lazy("moderation")
    parameter_name = "queue"

    def lookups(self, request, model_admin):
        return [("review", _("Awaiting review"))]

    def queryset(self, request, queryset):
        if self.value() == "review":
            return queryset.filter(state=JobState.REVIEW).order_by("created_at")  # oldest first
        return queryset


class ShareLinkInline(admin.TabularInline):
    """The job's share links, read-only: owners make and revoke them. Tokens are never
    stored, so none is shown here."""

    model = ShareLink
    extra = 0
    fields = ["created_at", "expires_at", "revoked_at", "view_count", "status"]
    readonly_fields = fields
    can_delete = False
    verbose_name = gettext_lazy("share link")
    verbose_name_plural = gettext_lazy("share links")

    @admin.display(description=gettext_lazy("status"))
    def status(self, link: ShareLink) -> str:
        if link.revoked_at:
            return _("revoked")
        return _("expired") if link.expires_at <= timezone.now() else _("active")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    inlines = [ShareLinkInline]
    # Compact rows: one line each (the verdict's full reasons are on the job's own page).
    list_display = [
        "short_id", "owner", "state", "mode", "charged", "result", "thumbnails", "moderation_summary", "created_at",
    ]
    list_display_links = ["short_id"]
    change_form_template = "admin/webapp/job/change_form.html"

    def get_list_display(self, request):
        # Links to every finished result put any staff member's view of people's pictures one
        # click away: only superusers get the column. A job in review shows its own thumbnails, to
        # those who review (staff who may only look jobs up, for a refund say, see no pictures).
        hidden = set() if request.user.is_superuser else {"result"}
        if not self.has_review_permission(request):
            hidden.add("thumbnails")
        return [name for name in super().get_list_display(request) if name not in hidden]

    def get_fieldsets(self, request, obj=None):
        if self.has_review_permission(request):
            return self.fieldsets
        return [(title, {**options, "fields": [f for f in options["fields"] if f != "thumbnails"]})
                for title, options in self.fieldsets]
    list_filter = [ReviewQueueFilter, "state", "mode", "queue"]
    search_fields = ["id", "owner__username", "owner__email"]
    list_select_related = ["owner", "source", "target"]
    actions = ["approve_review", "reject_review", "export_consent_csv"]
    readonly_fields = ["thumbnails", "moderation"]
    fieldsets = [
        (gettext_lazy("Moderation"), {"fields": ["thumbnails", "moderation"]}),
        (
            gettext_lazy("Job"),
            {"fields": ["owner", "state", "progress", "error_code", "error_message", "queue", "attempts"]},
        ),
        (gettext_lazy("Options"), {"fields": ["mode", "resolution", "faces", "face_index", "reference_face_index"]}),
        (
            gettext_lazy("Result"),
            {"fields": ["result_key", "result_visible", "cost", "gpu_seconds", "wall_seconds", "stage_ms"]},
        ),
        (gettext_lazy("Consent and provenance"), {"fields": ["consent_at", "consent_version", "consent_channel", "consent_text",
                                               "provenance"]}),
        (gettext_lazy("Times"), {"fields": ["created_at", "queued_at", "started_at", "completed_at"]}),
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

    # --- the moderator's desk: one job's page with everything needed to decide ----------------------

    def get_urls(self):
        review = self.admin_site.admin_view(self.review_view)
        return [
            path("<uuid:job_id>/review/", review, name="webapp_job_review"),
            path("consent-export/", self.admin_site.admin_view(self.consent_export_view), name="webapp_job_consent_export"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        job = Job.objects.select_related("owner", "source", "target").filter(pk=object_id).first()
        if job is not None:
            extra_context = {**(extra_context or {}), "desk": self._desk(request, job)}
        return super().change_view(request, object_id, form_url, extra_context)

    def _desk(self, request, job: Job) -> dict:
        verdict = moderation_selectors.verdict_for_review(job.id)
        queue = job_selectors.jobs_awaiting_review().exclude(id=job.id)
        history = job_selectors.owner_history(user=job.owner)
        return {
            "job": job,
            "can_review": job.state == JobState.REVIEW and self.has_review_permission(request),
            "media_hidden": not _may_see_media(request, job),
            "images": _desk_images(job) if _may_see_media(request, job) else [],
            "verdict": verdict,
            "checks": list(verdict.checks.all()) if verdict else [],
            "history": history,
            "prior_rejections": history[JobState.REJECTED],
            "recent_jobs": list(
                Job.objects.filter(owner=job.owner).exclude(id=job.id).order_by("-created_at")[:5]
            ),
            "next_in_queue": (queue.filter(created_at__gt=job.created_at).first() or queue.first()),
            "queue_length": queue.count() + (1 if job.state == JobState.REVIEW else 0),
        }

    def review_view(self, request, job_id):
        """Approve or reject one job in review, with the moderator's note (required); then the next."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_review_permission(request):
            raise PermissionDenied
        job = get_object_or_404(Job, id=job_id)
        change_url = reverse("admin:webapp_job_change", args=[job.id])
        decision = request.POST.get("decision")
        note = (request.POST.get("note") or "").strip()
        if decision not in ("approve", "reject"):
            return HttpResponseBadRequest("decision must be approve or reject")
        if not note:
            self.message_user(request, _("Write a note saying why before you decide."), messages.ERROR)
            return redirect(change_url)
        approved = decision == "approve"
        if job.state != JobState.REVIEW:
            self.message_user(
                request, _("This job is no longer in review (it is %(state)s).") % {"state": job.state}, messages.WARNING
            )
            return redirect(change_url)
        moved = (
            lifecycle.job_review_approve(job.id)
            if approved
            else lifecycle.job_review_reject(job.id, message=moderation_services.REVIEW_REJECT_MESSAGE)
        )
        if moved:
            moderation_reviews.verdict_record_review(
                subject_id=job.id, reviewer=request.user, approved=approved, note=note
            )
            self.message_user(
                request,
                (_("Approved job %(job)s.") if approved else _("Rejected job %(job)s. The hold was released."))
                % {"job": str(job.id)[:8]},
                messages.SUCCESS,
            )
        else:
            self.message_user(request, _("Someone else decided this job first."), messages.WARNING)
        following = (
            job_selectors.jobs_awaiting_review().filter(created_at__gt=job.created_at).first()
            or job_selectors.jobs_awaiting_review().first()
        )
        if following is not None:
            return redirect(reverse("admin:webapp_job_change", args=[following.id]))
        return redirect(reverse("admin:webapp_job_changelist") + "?queue=review")

    @admin.display(description=gettext_lazy("job"), ordering="id")
    def short_id(self, job: Job) -> str:
        return str(job.id)[:8]

    @admin.display(description=gettext_lazy("charged"), ordering="cost")
    def charged(self, job: Job) -> str:
        return f"{job.cost:.2f}" if job.cost is not None else "—"

    @admin.display(description=gettext_lazy("result"))
    def result(self, job: Job) -> str:
        if job.state != JobState.SUCCEEDED or not job.result_key or job.media_deleted_at:
            return "—"
        try:
            thumb = storage.presigned_get(settings.S3_RESULTS_BUCKET, job.thumbnail_key)
            full = storage.presigned_get(settings.S3_RESULTS_BUCKET, job.result_key)
        except Exception:  # a thumbnail must never break the list
            logger.exception("could not presign the result of job %s", job.id)
            return "—"
        return format_html(
            '<a href="{}" target="_blank" rel="noopener"><img src="{}" alt="{}" loading="lazy" '
            'style="height:36px;width:58px;object-fit:cover;border-radius:4px"></a>',
            full,
            thumb,
            _("result"),
        )

    @admin.display(description=gettext_lazy("images"))
    def thumbnails(self, job: Job) -> str:
        if job.state != JobState.REVIEW:
            return "—"
        images = _review_images(job)
        if not images:
            return _("(images no longer stored)")
        return format_html_join(
            " ",
            '<a href="{0}" target="_blank" rel="noopener"><img src="{0}" alt="{1}" title="{1}" '
            'style="height:40px;width:40px;object-fit:cover;border-radius:4px"></a>',
            images,
        )

    @admin.display(description=gettext_lazy("moderation"))
    def moderation_summary(self, job: Job) -> str:
        """One line: the decision and why, without the per-check notes (those are on the job's page)."""
        if job.state not in (JobState.REVIEW, JobState.REJECTED):
            return "—"
        verdict = moderation_selectors.verdict_for_review(job.id)
        if verdict is None:
            return job.error_code or "—"
        reasons = [r for r in moderation_selectors.verdict_reasons(verdict) if ": disabled" not in r]
        summary = f"{verdict.code or verdict.decision} ({verdict.stage})"
        line = reasons[0] if reasons else summary  # the finding that matters first; all of it on hover
        return format_html(
            '<span class="visage-one-line" title="{}">{}</span>', "\n".join([summary, *reasons]), line
        )

    @admin.display(description=gettext_lazy("moderation verdict"))
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
            format_html(_(" · reviewed: {decision} by {reviewer}"), decision=verdict.review_decision, reviewer=verdict.reviewed_by)
            if verdict.reviewed_at
            else "",
            format_html_join("", "<li>{}</li>", ((r,) for r in reasons)),
        )

    @admin.action(description=gettext_lazy("Approve selected jobs in review"), permissions=["review"])
    def approve_review(self, request, queryset) -> None:
        approved = 0
        for job_id in queryset.filter(state=JobState.REVIEW).values_list("id", flat=True):
            if lifecycle.job_review_approve(job_id):
                moderation_reviews.verdict_record_review(
                    subject_id=job_id, reviewer=request.user, approved=True
                )
                approved += 1
        self.message_user(
            request,
            ngettext("Approved %(count)d job.", "Approved %(count)d jobs.", approved) % {"count": approved},
            messages.SUCCESS,
        )

    @admin.action(description=gettext_lazy("Reject selected jobs in review"), permissions=["review"])
    def reject_review(self, request, queryset) -> None:
        rejected = 0
        for job_id in queryset.filter(state=JobState.REVIEW).values_list("id", flat=True):
            if lifecycle.job_review_reject(job_id, message=moderation_services.REVIEW_REJECT_MESSAGE):
                moderation_reviews.verdict_record_review(
                    subject_id=job_id, reviewer=request.user, approved=False
                )
                rejected += 1
        self.message_user(
            request,
            ngettext(
                "Rejected %(count)d job; its hold was released.",
                "Rejected %(count)d jobs; their holds were released.",
                rejected,
            )
            % {"count": rejected},
            messages.SUCCESS,
        )


    def consent_export_view(self, request) -> HttpResponse:
        """The consent records of a month's jobs (`?month=YYYY-MM`, every month without it): linked
        from billing's usage report, so the month's usage and its consent records export together."""
        if not self.has_view_permission(request):
            return HttpResponse(status=403)
        jobs = Job.objects.select_related("owner").order_by("created_at")
        month = request.GET.get("month", "")
        suffix = "all"
        if month:
            try:
                first = datetime.datetime.strptime(month, "%Y-%m").replace(tzinfo=datetime.UTC)
            except ValueError:
                return HttpResponse("month must be YYYY-MM", status=400, content_type="text/plain")
            following = (first + datetime.timedelta(days=32)).replace(day=1)
            jobs = jobs.filter(created_at__gte=first, created_at__lt=following)
            suffix = month
        response = HttpResponse(consent_csv(jobs), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="consent-{suffix}.csv"'
        return response

    @admin.action(description=gettext_lazy("Export consent records of selected jobs (CSV)"))
    def export_consent_csv(self, request, queryset) -> HttpResponse:
        response = HttpResponse(consent_csv(queryset.select_related("owner")), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="visage-consent.csv"'
        return response


CONSENT_COLUMNS = ["job_id", "created_at", "user_id", "username", "consent_at", "consent_version", "channel", "wording"]


def consent_csv(jobs) -> str:
    """Who stated, when, under which wording, that they may use the faces of each job."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CONSENT_COLUMNS)
    for job in jobs:
        writer.writerow([
            job.id, job.created_at.isoformat(), job.owner_id, spreadsheet_safe(job.owner.get_username()),
            job.consent_at.isoformat() if job.consent_at else "", job.consent_version, job.consent_channel,
            job.consent_text,
        ])
    return out.getvalue()


def _may_see_media(request, job: Job) -> bool:
    """A moderator (moderation.review_content) sees a person's photos and results when there is a
    reason to: the job waits in review, or someone reported it (an open takedown report). Any job's
    desk showed them (the originals of a job never flagged, presigned for download), and then any
    staff member's who could view jobs. Superusers see every job's."""
    return request.user.is_superuser or (
        request.user.has_perm("moderation.review_content")
        and (job.state == JobState.REVIEW or moderation_selectors.takedown_report_open(subject_id=job.id))
    )


def _desk_images(job: Job) -> list[dict]:
    """Source, target and output, large, side by side: whatever of them is still stored."""
    images = []
    try:
        for upload in (job.source, job.target):
            if upload.deleted_at is None:
                images.append({
                    "label": _("%(role)s (%(width)s×%(height)s)")
                    % {"role": upload.role, "width": upload.width, "height": upload.height},
                    "url": storage.presigned_get(
                        settings.S3_UPLOADS_BUCKET, upload.s3_key, content_type=upload.media_type
                    ),
                    "video": upload.kind == "video",
                })
        if job.result_key and not job.media_deleted_at:
            images.append({
                "label": _("output") if job.result_visible else _("output (held)"),
                "url": storage.presigned_get(settings.S3_RESULTS_BUCKET, job.result_key),
                "video": job.result_media_type.startswith("video/"),
            })
            if job.after_key != job.result_key:
                images.append({
                    # A video's middle frame (marked, like every copy of a result).
                    "label": _("output (web size; a video's middle frame)"),
                    "url": storage.presigned_get(settings.S3_RESULTS_BUCKET, job.after_key),
                    "video": False,
                })
            images.append({
                "label": _("target as processed"),
                "url": storage.presigned_get(settings.S3_RESULTS_BUCKET, job.before_key),
                "video": False,
            })
    except Exception:  # the desk must open even when S3 is unreachable
        logger.exception("could not presign the desk images for job %s", job.id)
    return images


def _review_images(job: Job) -> list[tuple[str, str]]:
    """(presigned URL, label) for what the moderator must look at."""
    try:
        if job.result_key:  # the output was flagged: show the held result (and what it was made from)
            shown = [(job.result_key, _("result"))]
            if job.after_key != job.result_key:  # else the result is its own web-size copy
                shown.append((job.after_key, _("result (web size)")))
            shown.append((job.before_key, _("target (processed)")))
            return [(storage.presigned_get(settings.S3_RESULTS_BUCKET, key), label) for key, label in shown]
        return [
            (storage.presigned_get(settings.S3_UPLOADS_BUCKET, upload.s3_key, content_type=upload.media_type), upload.role)
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
