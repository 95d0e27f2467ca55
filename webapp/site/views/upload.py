"""/jobs/new/: the upload page. It submits to /api/v1/jobs with fetch (so a 400's per-field `errors`
appear next to the field while both chosen files stay selected); the POST handled here is the
no-JavaScript fallback, parsed and refused the same way (webapp/site/submitting.py)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils.translation import gettext as _

from billing import selectors as billing_selectors
from billing.choices import Mode, Resolution
from webapp.jobs import readiness
from webapp.jobs.refusals import REFUSALS
from webapp.jobs.services import intake
from webapp.jobs.submission import DEFAULT_RESOLUTION, OptionsRefused
from webapp.media.validation import IMAGE_TYPES

from ..presentation import warming_up_line
from ..submitting import form_errors, parse_form, refused

VIDEO_TYPES = ("video/mp4", "video/quicktime", "video/webm")


def _upload_context(request: HttpRequest, *, errors: dict[str, str]) -> dict:
    image_types = list(IMAGE_TYPES.values())
    target_types = image_types + (list(VIDEO_TYPES) if settings.VIDEO_ENABLED else [])
    limit = filesizeformat(settings.MAX_UPLOAD_BYTES)
    warming = readiness.warming_up([readiness.SCREENING, readiness.SWAP])
    return {
        "errors": errors,
        # Said before anyone waits on it: a swap sent now is kept and starts once the workers do.
        "warming_up": warming_up_line({"ready_in_seconds": warming.ready_in_s}) if warming else "",
        "chosen": request.POST,  # the options sent, chosen again on a page with errors
        "balance": billing_selectors.account_balance(user=request.user),
        "video_enabled": settings.VIDEO_ENABLED,
        "source_accept": ",".join(image_types),
        "target_accept": ",".join(target_types),
        "max_upload_bytes": settings.MAX_UPLOAD_BYTES,
        "source_hint": _("A clear photo of one person’s face. JPEG, PNG, WebP, HEIC or AVIF, up to %(limit)s each.")
        % {"limit": limit},
        "source_more_hint": (
            _("Add up to %(count)d photos of the same person for a better likeness.") % {"count": settings.MAX_SOURCE_PHOTOS}
            if settings.MAX_SOURCE_PHOTOS > 1
            else ""
        ),
        "max_source_photos": settings.MAX_SOURCE_PHOTOS,
        "target_label": _("Photo or video to put it in") if settings.VIDEO_ENABLED else _("Photo to put it in"),
        "target_prompt": _("Choose the photo or video") if settings.VIDEO_ENABLED else _("Choose the photo"),
        "target_hint": (
            _("JPEG, PNG, WebP, HEIC or AVIF, or an MP4, MOV or WebM video, up to %(limit)s.")
            if settings.VIDEO_ENABLED
            else _("JPEG, PNG, WebP, HEIC or AVIF, up to %(limit)s.")
        ) % {"limit": limit},
        "modes": Mode.choices,
        "resolutions": Resolution.choices,
        # Never pre-ticked: consent is an act of each submission (and what its record says).
        "default_resolution": DEFAULT_RESOLUTION["web"],
        "consent_text": intake.consent_wording(),
    }


@login_required
def upload(request: HttpRequest) -> HttpResponse:
    errors: dict[str, str] = {}
    if request.method == "POST":
        try:
            submitted = parse_form(request)
            job, _replayed = intake.job_submit(
                user=request.user,
                sources=request.FILES.getlist("source"),
                target=request.FILES.get("target"),
                options=submitted.options,
                consent=submitted.consent,
            )
        except OptionsRefused as exc:
            errors.update(form_errors(exc))
        except REFUSALS as exc:
            refusal = refused(exc, what="upload")
            errors[refusal.field or "form"] = refusal.message
            if refusal.top_up:
                errors["top_up"] = reverse("credits")
        else:
            messages.success(request, _("Your swap is on its way. This page updates by itself."))
            return redirect("job-detail", job_id=job.id)
        if errors and request.FILES:
            errors.setdefault(
                "files", _("Browsers cannot keep chosen files after a reload: please choose them again.")
            )
    return render(
        request,
        "webapp/upload.html",
        _upload_context(request, errors=errors),
        status=400 if errors else 200,
    )
