"""/jobs/<id>/: one job's page, its live status JSON, and what can be done to it there (cancel,
delete, star, share, run again)."""

from __future__ import annotations

import dataclasses
import uuid

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from billing.choices import Mode, Resolution
from webapp.jobs import events, selectors, sharing, takedowns
from webapp.jobs.errors import JobError, JobNotCancelable
from webapp.jobs.models import Job
from webapp.jobs.refusals import REFUSALS
from webapp.jobs.services import intake, user_actions
from webapp.jobs.submission import OptionsRefused
from webapp.media import storage

from ..presentation import cards_for
from ..submitting import form_errors, parse_form, refused


def _own_job(request: HttpRequest, job_id: uuid.UUID) -> Job:
    return get_object_or_404(selectors.jobs_for_user(user=request.user), id=job_id)


@login_required
def job_detail(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    # The live page follows the job's events from before it was read, so no change slips between.
    events_after = events.position(user_id=request.user.pk) or ""
    job = _own_job(request, job_id)
    card = cards_for(request, [job])[0]
    return render(
        request,
        "webapp/job_detail.html",
        {
            "card": card,
            "job": card["job"],
            "compare_after_url": _compare_after_url(job, card),
            "events_after": events_after,
            "taken_down_message": _(takedowns.TAKEN_DOWN_MESSAGE),
            "share_enabled": settings.SHARE_LINKS_ENABLED,
            "share_refused": sharing.not_shareable_reason(job) if settings.SHARE_LINKS_ENABLED else "",
            "run_again": user_actions.originals_available(job),
            "run_again_refused": _(user_actions.ORIGINALS_DELETED_MESSAGE),
            "modes": Mode.choices,
            "resolutions": Resolution.choices,
            "consent_text": intake.consent_wording(),  # the box is never pre-ticked: consent per submission
        },
    )


def _compare_after_url(job: Job, card: dict) -> str:
    """The before/after slider's "after": a web-size copy of the result, marked, labelled and signed
    like it (the badge sits in the after side's corner); the download button gives the full file."""
    result = card["job"]["result"]
    if not result or result["deleted"]:
        return ""
    # A video's compare shows its middle frame; videos stored before that frame was kept have none.
    if card["is_video"] and not storage.exists(settings.S3_RESULTS_BUCKET, job.after_key):
        return ""
    return storage.presigned_get(
        settings.S3_RESULTS_BUCKET, job.after_key, expiry_s=settings.S3_PRESIGN_EXPIRY_S
    )


@login_required
@require_GET
def job_status(request: HttpRequest, job_id: uuid.UUID) -> JsonResponse:
    card = cards_for(request, [_own_job(request, job_id)])[0]
    standing = card["queue"]
    return JsonResponse(
        {
            **card["job"],
            "label": card["label"],
            "status_text": card["status"],
            "queue_position": standing.position if standing else None,
            "eta_seconds": standing.eta_seconds if standing else None,
        }
    )


@login_required
@require_POST
def job_cancel(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    job = _own_job(request, job_id)
    try:
        user_actions.job_cancel(job=job)
        messages.success(request, _("Swap canceled."))
    except JobNotCancelable as exc:
        messages.error(request, exc.message)
    return redirect("job-detail", job_id=job_id)


@login_required
@require_POST
def job_delete(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    job = _own_job(request, job_id)
    user_actions.job_delete(job=job)
    messages.success(request, _("Deleted the swap and everything stored for it."))
    return redirect("dashboard")


@login_required
@require_POST
def job_favourite(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """The star on a gallery card or the job page: a plain form, back to where it was pressed."""
    job = user_actions.job_set_favourite(
        job=_own_job(request, job_id), favourite=request.POST.get("favourite") == "1"
    )
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = reverse("job-detail", args=[job.id])
    return redirect(back)


@login_required
@require_POST
def job_share(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    try:
        sharing.share_link_create(job=_own_job(request, job_id))
        messages.success(
            request, _("Anyone with the link can now see this result, until it expires or you stop sharing.")
        )
    except JobError as exc:
        messages.error(request, exc.message)
    return redirect("job-detail", job_id=job_id)


@login_required
@require_POST
def job_unshare(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    sharing.share_links_revoke(job=_own_job(request, job_id))
    messages.success(request, _("Stopped sharing: the link no longer works."))
    return redirect("job-detail", job_id=job_id)


@login_required
@require_POST
def job_run_again(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """Run again: the same uploaded originals with other options, submitted like any new swap."""
    job = _own_job(request, job_id)
    try:
        submitted = parse_form(request)
        options = submitted.options
        # A job that put different people into different faces keeps that pairing (it says which faces).
        face_sources = tuple((pair["face"], pair["source"]) for pair in job.face_sources or [])
        if face_sources:
            options = dataclasses.replace(
                options, faces="one", face_index=None, reference_face_index=None, face_sources=face_sources
            )
        new_job, _replayed = user_actions.job_run_again(
            user=request.user, job=job, options=options, consent=submitted.consent
        )
    except OptionsRefused as exc:
        messages.error(
            request, " ".join(f"{field}: {message}" for field, message in form_errors(exc).items())
        )
    except REFUSALS as exc:
        messages.error(request, refused(exc, what="run again").message)
    else:
        messages.success(request, _("Running it again with the new options. This page updates by itself."))
        return redirect("job-detail", job_id=new_job.id)
    return redirect("job-detail", job_id=job_id)
