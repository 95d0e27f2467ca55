"""Site views: thin, calling services and selectors like the API does.

The upload page submits to /api/v1/jobs with fetch (so a 400's per-field `errors` appear next to the
field while both chosen files stay selected); the POST handled here is the no-JavaScript fallback.
"""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import filesizeformat
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_GET, require_POST

from billing import selectors as billing_selectors
from billing import services as billing_services
from billing.choices import Mode, Resolution
from billing.errors import InsufficientCredit
from billing.pricing import money_text
from webapp.accounts import selectors as account_selectors
from webapp.accounts import services as account_services
from webapp.accounts.forms import LoginForm
from webapp.accounts.models import ApiToken
from webapp.jobs import events, examples, selectors, sharing, takedowns
from webapp.jobs.errors import JobError, JobNotCancelable
from webapp.jobs.models import Job
from webapp.jobs.services import intake, user_actions
from webapp.media import storage
from webapp.media.storage import StorageError
from webapp.media.validation import IMAGE_TYPES, UploadRejected

from .credits import history_page, money_context
from .forms import ApiTokenForm, JobOptionsForm, SignupForm, TakedownReportForm
from .presentation import cards_for

logger = logging.getLogger(__name__)

VIDEO_TYPES = ("video/mp4", "video/quicktime", "video/webm")
DASHBOARD_LIMIT = 50
NEW_TOKEN_SESSION_KEY = "visage_new_api_token"
CONSENT_SESSION_KEY = "visage_consent_version"


# --- account -----------------------------------------------------------------------------------


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("dashboard")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        credits = settings.SIGNUP_CREDITS
        with transaction.atomic():
            user = form.save()
            if credits > 0:
                billing_services.account_top_up(
                    user=user, amount=credits, actor=None, reason="sign-up credits"
                )
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        if credits > 0:
            messages.success(request, f"Welcome to Visage! We added {money_text(credits)} free credits.")
        return redirect("upload")
    return render(request, "registration/signup.html", {"form": form})


class LoginView(auth_views.LoginView):
    """Django's login with the sign-in limits: a locked-out attempt is a 429 with Retry-After
    and the form says why and for how long."""

    form_class = LoginForm
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.locked is not None:
            response.status_code = 429
            response["Retry-After"] = str(form.locked.retry_after_s)
        return response


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
    page, rows = history_page(request)
    return {
        **money_context(request),
        "history_page": page,
        "history": rows,
        "tokens": account_selectors.api_tokens_for_user(user=request.user),
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
    token, key = account_services.api_token_create(user=request.user, name=form.cleaned_data["name"])
    request.session[NEW_TOKEN_SESSION_KEY] = {"name": token.name, "key": key}
    return redirect("account")


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, id=token_id, owner=request.user, revoked_at__isnull=True)
    account_services.api_token_revoke(token=token)
    messages.success(request, f"Revoked the token “{token.name}”. Apps using it can no longer sign in.")
    return redirect("account")


# --- jobs --------------------------------------------------------------------------------------


# --- the front page ------------------------------------------------------------------------------

# What the landing page prices: a 1280×720 photo at 720p in each quality.
LANDING_EXAMPLE = {"width": 1280, "height": 720, "frames": 1, "resolution": "720p"}


def home(request: HttpRequest) -> HttpResponse:
    """`/`: signed-in people get their gallery; visitors get what Visage does, its prices and rules."""
    if request.user.is_authenticated:
        return dashboard(request)
    prices = []
    for value, label in Mode.choices:
        try:
            quote = billing_services.quote_job(user=None, mode=value, **LANDING_EXAMPLE)
        except Exception:  # no plan configured yet: the page still explains the product
            logger.warning("could not price the landing page's example", exc_info=True)
            prices = []
            break
        prices.append({"mode": label, "amount": quote.amount, "currency": quote.currency})
    return render(
        request,
        "webapp/landing.html",
        {
            "examples": _landing_examples(),
            "prices": prices,
            "signup_credits": settings.SIGNUP_CREDITS,
            "video_enabled": settings.VIDEO_ENABLED,
            "retention_days": settings.RESULT_RETENTION_DAYS,
        },
    )


def _landing_examples() -> list[dict]:
    """The engine-made before/after examples (manage.py visage_examples), or none before they exist
    or while S3 does not answer: the landing page then leaves the section out."""
    try:
        manifest = examples.load()
    except StorageError:
        logger.warning("landing examples unavailable", exc_info=True)
        return []
    return manifest["examples"] if manifest else []


@require_GET
def example_picture(request: HttpRequest, slug: str, which: str) -> HttpResponse:
    """One picture of a landing example (public, like the landing page; long browser cache)."""
    try:
        data = examples.image(slug, which)
    except storage.ObjectMissing:
        raise Http404("No such example picture.") from None
    except StorageError:
        return HttpResponse("Storage is briefly unavailable.", status=503, content_type="text/plain")
    response = HttpResponse(data, content_type="image/jpeg")
    response["Cache-Control"] = "public, max-age=86400"
    return response


GALLERY_PAGE_SIZE = 24
GALLERY_FILTERS = {
    "state": [("", "All"), ("active", "In progress"), ("done", "Done"), ("failed", "Not done")],
    "kind": [("", "Photos and videos"), ("image", "Photos"), ("video", "Videos")],
}


def _gallery_filters(request: HttpRequest) -> dict:
    """The filter values the gallery understands (anything else is ignored, not an error)."""
    values = {name: request.GET.get(name, "") for name in GALLERY_FILTERS}
    values = {name: v if v in dict(GALLERY_FILTERS[name]) else "" for name, v in values.items()}
    values["q"] = " ".join(request.GET.get("q", "").split())[:200]
    values["favourite"] = "1" if request.GET.get("favourite") == "1" else ""
    for name in ("from", "to"):
        try:
            values[name] = parse_date(request.GET.get(name) or "")
        except ValueError:  # well-formed but not a real day (2026-02-31)
            values[name] = None
    return values


def _gallery_jobs(request: HttpRequest, filters: dict):
    return selectors.jobs_for_gallery(
        user=request.user,
        state_group=filters["state"],
        kind=filters["kind"],
        day_from=filters["from"],
        day_to=filters["to"],
        query=filters["q"],
        favourites_only=bool(filters["favourite"]),
    )


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    events_after = events.position(user_id=request.user.pk) or ""  # before the jobs are read
    filters = _gallery_filters(request)
    page = Paginator(_gallery_jobs(request, filters), GALLERY_PAGE_SIZE).get_page(request.GET.get("page"))
    query = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in filters.items() if v}
    return render(
        request,
        "webapp/dashboard.html",
        {
            "cards": cards_for(request, list(page.object_list)),
            "page": page,
            "filters": filters,
            "filter_choices": GALLERY_FILTERS,
            "filtered": bool(query),
            "filter_query": urlencode(query),
            "now_iso": timezone.now().isoformat(),
            "events_after": events_after,
            "balance": billing_selectors.account_balance(user=request.user),
        },
    )


@login_required
@require_GET
def dashboard_status(request: HttpRequest) -> JsonResponse:
    """The gallery's one live source: the watched cards re-rendered (`?ids=<uuid>,…`, at most 50),
    the ids of those that are gone (deleted elsewhere), and, with `since=<ISO time>`, the cards of
    jobs created after it that match the gallery's filters (made in another tab or by the API)."""
    ids = []
    for raw in request.GET.get("ids", "").split(",")[:DASHBOARD_LIMIT]:
        try:
            ids.append(uuid.UUID(raw))
        except ValueError:
            continue
    jobs = list(selectors.jobs_for_user(user=request.user).filter(id__in=ids))
    found = {job.id for job in jobs}
    new_jobs = []
    since = parse_datetime(request.GET.get("since", "") or "") if request.GET.get("since") else None
    if since is not None:
        new_jobs = list(
            _gallery_jobs(request, _gallery_filters(request))
            .filter(created_at__gt=since)
            .exclude(id__in=ids)[:DASHBOARD_LIMIT]
        )
    return JsonResponse(
        {
            "jobs": [_card_json(request, card) for card in cards_for(request, jobs)],
            "new": [_card_json(request, card) for card in cards_for(request, new_jobs)],
            "gone": [str(i) for i in ids if i not in found],
        }
    )


def _card_json(request: HttpRequest, card: dict) -> dict:
    return {
        "id": card["job"]["id"],
        "state": card["job"]["state"],
        "terminal": card["job"]["terminal"],
        "progress": card["job"]["progress"],
        "created_at": card["job"]["created_at"],
        "html": render_to_string("webapp/_job_card.html", {"card": card}, request=request),
    }


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
        "consent_text": settings.CONSENT_TEXT,
        "consent_checked": consent_remembered(request),
    }


def consent_remembered(request: HttpRequest) -> bool:
    """The upload form's consent box starts ticked once this session consented to the current wording."""
    return request.session.get(CONSENT_SESSION_KEY) == settings.CONSENT_VERSION


@login_required
def upload(request: HttpRequest) -> HttpResponse:
    errors: dict[str, str] = {}
    form = JobOptionsForm(request.POST or None)
    if request.method == "POST":
        if not form.is_valid():
            errors.update({field: " ".join(msgs) for field, msgs in form.errors.items()})
        else:
            data = form.cleaned_data
            options = intake.JobOptions(mode=data["mode"], resolution=data["resolution"], **form.face_options())
            try:
                job, _ = intake.job_submit(
                    user=request.user,
                    sources=request.FILES.getlist("source"),
                    target=request.FILES.get("target"),
                    options=options,
                    consent=intake.Consent(given=data["consent"], channel="site"),
                )
                request.session[CONSENT_SESSION_KEY] = settings.CONSENT_VERSION
                messages.success(request, "Your swap is on its way. This page updates by itself.")
                return redirect("job-detail", job_id=job.id)
            except UploadRejected as exc:
                errors[exc.field] = exc.message
            except JobError as exc:
                errors[exc.field or "form"] = exc.message
            except InsufficientCredit as exc:
                errors["form"] = str(exc.detail)
                errors["top_up"] = reverse("credits")
            except StorageError:
                logger.warning("upload refused: storage unavailable", exc_info=True)
                errors["form"] = "Storage is briefly unavailable, so nothing was charged. Please try again in a minute."
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
            "share_enabled": settings.SHARE_LINKS_ENABLED,
            "share_refused": sharing.not_shareable_reason(job) if settings.SHARE_LINKS_ENABLED else "",
            "run_again": user_actions.originals_available(job),
            "run_again_refused": user_actions.ORIGINALS_DELETED_MESSAGE,
            "modes": Mode.choices,
            "resolutions": Resolution.choices,
            "consent_text": settings.CONSENT_TEXT,
            "consent_checked": consent_remembered(request),
        },
    )


def _compare_after_url(job: Job, card: dict) -> str:
    """The before/after slider's "after": the result without the visible mark, a private
    web-size preview shown inline; the download button and the API give only the marked, signed file."""
    result = card["job"]["result"]
    if not result or result["deleted"]:
        return ""
    # A video's compare shows its middle frame; videos stored before that frame was kept have none.
    if card["is_video"] and not storage.exists(settings.S3_RESULTS_BUCKET, job.after_key):
        return ""
    return storage.presigned_get(settings.S3_RESULTS_BUCKET, job.after_key, expiry_s=settings.S3_PRESIGN_EXPIRY_S)


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
        messages.success(request, "Canceled. Nothing was charged; the credits set aside are available again.")
    except JobNotCancelable as exc:
        messages.error(request, exc.message)
    return redirect("job-detail", job_id=job_id)


@login_required
@require_POST
def job_delete(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    job = _own_job(request, job_id)
    user_actions.job_delete(job=job)
    messages.success(request, "Deleted the swap and everything stored for it.")
    return redirect("dashboard")


@login_required
@require_POST
def job_favourite(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """The star on a gallery card or the job page: a plain form, back to where it was pressed."""
    job = user_actions.job_set_favourite(job=_own_job(request, job_id), favourite=request.POST.get("favourite") == "1")
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        back = reverse("job-detail", args=[job.id])
    return redirect(back)


@login_required
@require_POST
def job_share(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    try:
        sharing.share_link_create(job=_own_job(request, job_id))
        messages.success(request, "Anyone with the link can now see this result, until it expires or you stop sharing.")
    except JobError as exc:
        messages.error(request, exc.message)
    return redirect("job-detail", job_id=job_id)


@login_required
@require_POST
def job_unshare(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    sharing.share_links_revoke(job=_own_job(request, job_id))
    messages.success(request, "Stopped sharing: the link no longer works.")
    return redirect("job-detail", job_id=job_id)


@login_required
@require_POST
def job_run_again(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """Run again: the same uploaded originals with other options, submitted like any new swap."""
    job = _own_job(request, job_id)
    form = JobOptionsForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(f"{field}: {' '.join(msgs)}" for field, msgs in form.errors.items()))
        return redirect("job-detail", job_id=job_id)
    data = form.cleaned_data
    # A job that put different people into different faces keeps that pairing (it says which faces).
    face_sources = tuple((pair["face"], pair["source"]) for pair in job.face_sources or [])
    faces = {"faces": "one", "face_sources": face_sources} if face_sources else form.face_options()
    options = intake.JobOptions(mode=data["mode"], resolution=data["resolution"], **faces)
    try:
        new_job, _ = user_actions.job_run_again(
            user=request.user, job=job, options=options, consent=intake.Consent(given=data["consent"], channel="site")
        )
    except (JobError, UploadRejected) as exc:
        messages.error(request, exc.message)
    except InsufficientCredit as exc:
        messages.error(request, str(exc.detail))
    except StorageError:
        logger.warning("run again refused: storage unavailable", exc_info=True)
        messages.error(request, "Storage is briefly unavailable, so nothing was charged. Please try again in a minute.")
    else:
        request.session[CONSENT_SESSION_KEY] = settings.CONSENT_VERSION
        messages.success(request, "Running it again with the new options. This page updates by itself.")
        return redirect("job-detail", job_id=new_job.id)
    return redirect("job-detail", job_id=job_id)


# --- share links --------------------------------------------------------------------------


@require_GET
def share_page(request: HttpRequest, token: str) -> HttpResponse:
    """/s/<token>/: public, unlisted. The result with its AI-generated label, nothing of the inputs or
    the owner. Unknown, expired, revoked, deleted or taken down: one plain 404 for all (no oracle)."""
    job = sharing.shared_job(token)
    if job is None:
        response = render(request, "webapp/share_missing.html", status=404)
    else:
        expiry_s = settings.SHARE_PRESIGN_EXPIRY_S
        extension = job.result_key.rsplit(".", 1)[-1]
        bucket = settings.S3_RESULTS_BUCKET
        response = render(
            request,
            "webapp/share.html",
            {
                "inline_url": storage.presigned_get(bucket, job.result_key, expiry_s=expiry_s),
                "download_url": storage.presigned_get(
                    bucket, job.result_key, expiry_s=expiry_s, download_name=f"visage-shared.{extension}"
                ),
                "is_video": job.result_media_type.startswith("video/"),
                "width": job.processed_width,
                "height": job.processed_height,
                "has_credentials": bool(job.provenance),
                "service_name": settings.SERVICE_NAME,
            },
        )
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Referrer-Policy"] = "no-referrer"  # the token must not leave in a Referer header
    response["Cache-Control"] = "no-store"
    return response


# --- takedown reports ---------------------------------------------------------------------


def report(request: HttpRequest) -> HttpResponse:
    """/report: public. A person who found a swap of themselves reports it to the moderators."""
    form = TakedownReportForm(request.POST or None, request.FILES or None, max_bytes=settings.VIDEO_MAX_BYTES)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        upload = data.get("file")
        created = takedowns.takedown_report_submit(
            reporter_name=data["reporter_name"],
            reporter_email=data["reporter_email"],
            relation=data["relation"],
            details=data["details"],
            link=data["link"].strip(),
            file_data=upload.read() if upload else None,
        )
        return render(request, "webapp/report.html", {"report": created})
    return render(request, "webapp/report.html", {"form": form}, status=400 if form.errors else 200)
