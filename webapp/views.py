"""Site views: thin, calling services and selectors like the API does.

The upload page submits to /api/v1/jobs with fetch (so a 400's per-field `errors` appear next to the
field while both chosen files stay selected); the POST handled here is the no-JavaScript fallback.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import filesizeformat
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.timesince import timesince
from django.views.decorators.http import require_GET, require_POST

from billing import selectors as billing_selectors
from billing import services as billing_services
from billing.choices import Mode, Resolution
from billing.errors import InsufficientCredit

from . import selectors, services
from .api.problems import TITLES
from .choices import JobState
from .errors import JobError, JobNotCancelable
from .forms import ApiTokenForm, JobOptionsForm, SignupForm
from .models import ApiToken, Job
from .presentation import job_payload
from .validation import IMAGE_TYPES, UploadRejected, inspect_upload

logger = logging.getLogger(__name__)

VIDEO_TYPES = ("video/mp4", "video/quicktime", "video/webm")
DASHBOARD_LIMIT = 50
LEDGER_LIMIT = 100
NEW_TOKEN_SESSION_KEY = "visage_new_api_token"


# --- queue standing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueStanding:
    position: int  # 1 = next to start
    eta_seconds: int  # rough: the GPU-time estimates of the jobs ahead and this one, over the workers


def queue_standings(jobs: list[Job]) -> dict[uuid.UUID, QueueStanding]:
    """Where each queued job in `jobs` stands. GPU workers take queues in settings.GPU_QUEUES order."""
    wanted = {job.id for job in jobs if job.state == JobState.QUEUED}
    if not wanted:
        return {}
    priority = {name: rank for rank, name in enumerate(settings.GPU_QUEUES)}
    waiting = sorted(
        Job.objects.filter(state=JobState.QUEUED).values_list("id", "queue", "queued_at", "quote")[:5000],
        key=lambda row: (priority.get(row[1], len(priority)), row[2] or row[0].hex),
    )
    workers = _gpu_worker_count()
    standings: dict[uuid.UUID, QueueStanding] = {}
    seconds_ahead = 0.0
    for position, (job_id, _queue, _queued_at, quote) in enumerate(waiting, start=1):
        estimate = _estimate_seconds(quote)
        seconds_ahead += estimate
        if job_id in wanted:
            standings[job_id] = QueueStanding(
                position=position, eta_seconds=max(1, round(seconds_ahead / workers))
            )
    return standings


def _estimate_seconds(quote: dict | None) -> float:
    try:
        return max(1.0, float(Decimal(str((quote or {}).get("gpu_seconds_estimate", "2")))))
    except ArithmeticError:
        return 2.0


def _gpu_worker_count() -> int:
    try:
        import django_rq  # noqa: PLC0415
        from rq import Worker  # noqa: PLC0415

        connection = django_rq.get_connection(settings.GPU_QUEUES[0])
        return max(
            1,
            sum(
                1
                for w in Worker.all(connection=connection)
                if set(w.queue_names()) & set(settings.GPU_QUEUES)
            ),
        )
    except Exception:  # the estimate is a hint; Redis trouble must not break the page
        logger.debug("could not count GPU workers", exc_info=True)
        return 1


STATE_LABELS = {
    JobState.CREATED: "Submitted",
    JobState.SCREENING: "Checking",
    JobState.REVIEW: "In review",
    JobState.QUEUED: "Queued",
    JobState.RUNNING: "Processing",
    JobState.SUCCEEDED: "Done",
    JobState.REJECTED: "Rejected",
    JobState.FAILED: "Failed",
    JobState.CANCELED: "Canceled",
}


def _status_line(job: Job, standing: QueueStanding | None) -> str:
    """One short sentence for a job that is still going."""
    if job.state in (JobState.CREATED, JobState.SCREENING):
        return "Checking the photos against our content rules…"
    if job.state == JobState.REVIEW:
        return "A person is reviewing this swap; that usually takes a few minutes."
    if job.state == JobState.QUEUED:
        if standing is None:
            return "Waiting for a free worker…"
        place = "Next in line" if standing.position == 1 else f"#{standing.position} in line"
        return f"{place} · ready in about {_duration(standing.eta_seconds)}"
    if job.state == JobState.RUNNING:
        return f"Swapping faces… {job.progress}%"
    return ""


def _duration(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 90 else f"{round(minutes / 60)} h"


def _ago(moment: datetime) -> str:
    seconds = (timezone.now() - moment).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 7 * 86400:
        return f"{timesince(moment).split(',')[0]} ago"
    return date_format(timezone.localtime(moment), "M j, Y")


def _cards(request: HttpRequest, jobs: list[Job]) -> list[dict]:
    """What a job card shows: the shared job dict plus the site's words for where it stands."""
    standings = queue_standings(jobs)
    cards = []
    for job in jobs:
        payload = job_payload(job, request=request)
        result = payload["result"] or {}
        cards.append(
            {
                "job": payload,
                "created_at": job.created_at,
                "ago": _ago(job.created_at),
                "label": STATE_LABELS.get(job.state, job.state),
                "status": _status_line(job, standings.get(job.id)),
                "queue": standings.get(job.id),
                "is_video": (result.get("media_type") or "").startswith("video/"),
                "mode_label": Mode(job.mode).label if job.mode in Mode.values else job.mode,
            }
        )
    return cards


# --- account -----------------------------------------------------------------------------------


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("dashboard")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        credits = Decimal(str(getattr(settings, "SIGNUP_CREDITS", Decimal("20"))))
        with transaction.atomic():
            user = form.save()
            if credits > 0:
                billing_services.account_top_up(
                    user=user, amount=credits, actor=None, reason="sign-up credits"
                )
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        if credits > 0:
            balance = billing_selectors.account_balance(user=user)
            messages.success(
                request, f"Welcome to Visage! We added {balance.available} {balance.currency} of free credit."
            )
        return redirect("upload")
    return render(request, "registration/signup.html", {"form": form})


def reset_link_lifetime() -> str:
    """How long a password-reset link works, in words ("24 hours", "3 days")."""
    seconds = int(settings.PASSWORD_RESET_TIMEOUT)
    if seconds < 2 * 3600:
        minutes = max(1, round(seconds / 60))
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    if seconds <= 48 * 3600:
        return f"{round(seconds / 3600)} hours"
    return f"{round(seconds / 86400)} days"


class PasswordResetView(auth_views.PasswordResetView):
    """Django's view; the email and the page also say how long the link works."""

    template_name = "registration/password_reset_form.html"
    email_template_name = "registration/password_reset_email.html"
    subject_template_name = "registration/password_reset_subject.txt"

    @property
    def extra_email_context(self) -> dict:  # read by form_valid; a property so tests can change the setting
        return {"link_lifetime": reset_link_lifetime()}


class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    template_name = "registration/password_reset_done.html"

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "link_lifetime": reset_link_lifetime()}


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    template_name = "registration/password_reset_confirm.html"

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "link_lifetime": reset_link_lifetime()}


@login_required
def account(request: HttpRequest) -> HttpResponse:
    new_token = request.session.pop(NEW_TOKEN_SESSION_KEY, None)  # shown once, then gone
    return render(request, "webapp/account.html", _account_context(request, ApiTokenForm(), new_token=new_token))


def _account_context(request: HttpRequest, token_form: ApiTokenForm, *, new_token: dict | None = None) -> dict:
    return {
        "balance": billing_selectors.account_balance(user=request.user),
        "ledger": billing_selectors.ledger_for_user(user=request.user)[:LEDGER_LIMIT],
        "tokens": selectors.api_tokens_for_user(user=request.user),
        "token_form": token_form,
        "new_token": new_token,
    }


@login_required
@require_POST
def token_create(request: HttpRequest) -> HttpResponse:
    form = ApiTokenForm(request.POST)
    if not form.is_valid():
        return render(
            request,
            "webapp/account.html",
            _account_context(request, form),
            status=400,
        )
    token, key = services.api_token_create(user=request.user, name=form.cleaned_data["name"])
    request.session[NEW_TOKEN_SESSION_KEY] = {"name": token.name, "key": key}
    return redirect("account")


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, id=token_id, owner=request.user, revoked_at__isnull=True)
    services.api_token_revoke(token=token)
    messages.success(request, f"Revoked the token “{token.name}”. Apps using it can no longer sign in.")
    return redirect("account")


# --- jobs --------------------------------------------------------------------------------------


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    jobs = list(selectors.jobs_for_user(user=request.user)[:DASHBOARD_LIMIT])
    return render(
        request,
        "webapp/dashboard.html",
        {
            "cards": _cards(request, jobs),
            "balance": billing_selectors.account_balance(user=request.user),
        },
    )


@login_required
@require_GET
def dashboard_status(request: HttpRequest) -> JsonResponse:
    """The cards the dashboard is watching, re-rendered: `?ids=<uuid>,<uuid>` (at most 50)."""
    ids = []
    for raw in request.GET.get("ids", "").split(",")[:DASHBOARD_LIMIT]:
        try:
            ids.append(uuid.UUID(raw))
        except ValueError:
            continue
    jobs = list(selectors.jobs_for_user(user=request.user).filter(id__in=ids))
    return JsonResponse(
        {
            "jobs": [
                {
                    "id": card["job"]["id"],
                    "state": card["job"]["state"],
                    "terminal": card["job"]["terminal"],
                    "progress": card["job"]["progress"],
                    "html": render_to_string("webapp/_job_card.html", {"card": card}, request=request),
                }
                for card in _cards(request, jobs)
            ]
        }
    )


def _upload_context(request: HttpRequest, *, errors: dict[str, str], form: JobOptionsForm) -> dict:
    image_types = list(IMAGE_TYPES.values())
    target_types = image_types + (list(VIDEO_TYPES) if settings.VIDEO_ENABLED else [])
    limit = filesizeformat(settings.MAX_UPLOAD_BYTES)
    return {
        "errors": errors,
        "form": form,
        "balance": billing_selectors.account_balance(user=request.user),
        "video_enabled": settings.VIDEO_ENABLED,
        "source_accept": ",".join(image_types),
        "target_accept": ",".join(target_types),
        "max_upload_bytes": settings.MAX_UPLOAD_BYTES,
        "source_hint": f"A clear photo of one person’s face. JPEG, PNG or WebP, up to {limit} each.",
        "source_more_hint": (
            f"Add up to {settings.MAX_SOURCE_PHOTOS} photos of the same person for a better likeness."
            if settings.MAX_SOURCE_PHOTOS > 1
            else ""
        ),
        "max_source_photos": settings.MAX_SOURCE_PHOTOS,
        "target_label": "Photo or video to put it in" if settings.VIDEO_ENABLED else "Photo to put it in",
        "target_prompt": "Choose the photo or video" if settings.VIDEO_ENABLED else "Choose the photo",
        "target_hint": (
            f"JPEG, PNG or WebP{', or an MP4, MOV or WebM video' if settings.VIDEO_ENABLED else ''}, "
            f"up to {limit}."
        ),
        "modes": Mode.choices,
        "resolutions": Resolution.choices,
    }


@login_required
def upload(request: HttpRequest) -> HttpResponse:
    errors: dict[str, str] = {}
    form = JobOptionsForm(request.POST or None)
    if request.method == "POST":
        if not form.is_valid():
            errors.update({field: " ".join(msgs) for field, msgs in form.errors.items()})
        else:
            data = form.cleaned_data
            options = services.JobOptions(
                mode=data["mode"],
                resolution=data["resolution"],
                faces=data["faces"],
                face_index=data["face_index"] if data["faces"] == "one" else None,
            )
            try:
                sources = request.FILES.getlist("source") or [None]
                if len(sources) > settings.MAX_SOURCE_PHOTOS:
                    raise UploadRejected(
                        "too_many_sources",
                        f"Choose at most {settings.MAX_SOURCE_PHOTOS} photos of the face, not {len(sources)}.",
                        field="source",
                    )
                source, *extra_sources = [
                    inspect_upload(f, field="source", allow_video=False) for f in sources
                ]
                target = inspect_upload(
                    request.FILES.get("target"), field="target", allow_video=settings.VIDEO_ENABLED
                )
                job, _ = services.job_create(
                    user=request.user,
                    source=source,
                    target=target,
                    options=options,
                    extra_sources=extra_sources,
                )
                messages.success(request, "Your swap is on its way. This page updates by itself.")
                return redirect("job-detail", job_id=job.id)
            except UploadRejected as exc:
                errors[exc.field] = exc.message
            except JobError as exc:
                errors["form"] = exc.message
            except InsufficientCredit as exc:
                errors["form"] = str(exc.detail)
        if errors and request.FILES:
            errors.setdefault(
                "files", "Browsers cannot keep chosen files after a reload: please choose them again."
            )
    return render(
        request,
        "webapp/upload.html",
        _upload_context(request, errors=errors, form=form),
        status=400 if errors else 200,
    )


def _own_job(request: HttpRequest, job_id: uuid.UUID) -> Job:
    return get_object_or_404(selectors.jobs_for_user(user=request.user), id=job_id)


@login_required
def job_detail(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    job = _own_job(request, job_id)
    card = _cards(request, [job])[0]
    return render(request, "webapp/job_detail.html", {"card": card, "job": card["job"]})


@login_required
@require_GET
def job_status(request: HttpRequest, job_id: uuid.UUID) -> JsonResponse:
    card = _cards(request, [_own_job(request, job_id)])[0]
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
        services.job_cancel(job=job)
        messages.success(request, "Canceled. The held credits are available again.")
    except JobNotCancelable as exc:
        messages.error(request, exc.message)
    return redirect("job-detail", job_id=job_id)


@login_required
@require_POST
def job_delete(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    job = _own_job(request, job_id)
    services.job_delete(job=job)
    messages.success(request, "Deleted the swap and everything stored for it.")
    return redirect("dashboard")


def error_doc(request: HttpRequest, code: str) -> HttpResponse:
    key = code.replace("-", "_")
    if key not in TITLES:
        raise Http404("Unknown error code")
    return render(request, "webapp/error_doc.html", {"code": key, "title": TITLES[key]})
