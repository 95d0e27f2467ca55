"""Site views: thin, calling services and selectors like the API does."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render

from billing import selectors as billing_selectors

from . import selectors, services
from .api.problems import TITLES
from .errors import JobError
from .presentation import job_payload
from .validation import UploadRejected, inspect_upload


def signup(request):
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        return redirect("dashboard")
    return render(request, "registration/signup.html", {"form": form})


@login_required
def dashboard(request):
    jobs = selectors.jobs_for_user(user=request.user)[:50]
    return render(request, "webapp/dashboard.html", {
        "jobs": [job_payload(job, request=request) for job in jobs],
        "balance": billing_selectors.account_balance(user=request.user),
    })


@login_required
def upload(request):
    errors: dict[str, str] = {}
    if request.method == "POST":
        options = services.JobOptions(
            mode=request.POST.get("mode", "standard"), resolution=request.POST.get("resolution", "720p"),
            faces=request.POST.get("faces", "one"),
        )
        try:
            source = inspect_upload(request.FILES.get("source"), field="source", allow_video=False)
            target = inspect_upload(request.FILES.get("target"), field="target", allow_video=settings.VIDEO_ENABLED)
            job, _ = services.job_create(user=request.user, source=source, target=target, options=options)
            return redirect("job-detail", job_id=job.id)
        except UploadRejected as exc:
            errors[exc.field] = exc.message
        except (JobError,) as exc:
            errors["form"] = exc.message
        except Exception as exc:
            from billing.errors import InsufficientCredit  # noqa: PLC0415

            if not isinstance(exc, InsufficientCredit):
                raise
            errors["form"] = str(exc.detail)
    return render(request, "webapp/upload.html", {
        "errors": errors, "balance": billing_selectors.account_balance(user=request.user),
    }, status=400 if errors else 200)


@login_required
def job_detail(request, job_id):
    job = get_object_or_404(selectors.jobs_for_user(user=request.user), id=job_id)
    return render(request, "webapp/job_detail.html", {"job": job_payload(job, request=request)})


@login_required
def job_status(request, job_id):
    job = get_object_or_404(selectors.jobs_for_user(user=request.user), id=job_id)
    return JsonResponse(job_payload(job, request=request))


@login_required
def account(request):
    return render(request, "webapp/account.html", {
        "balance": billing_selectors.account_balance(user=request.user),
        "tokens": selectors.api_tokens_for_user(user=request.user),
    })


def error_doc(request, code):
    key = code.replace("-", "_")
    if key not in TITLES:
        raise Http404("Unknown error code")
    return render(request, "webapp/error_doc.html", {"code": key, "title": TITLES[key]})
