"""Read-only queries for jobs and uploads."""

from __future__ import annotations

from django.db.models import QuerySet

from .models import ApiToken, Job


def jobs_for_user(*, user, state: str | None = None) -> QuerySet[Job]:
    jobs = (
        Job.objects.filter(owner=user)
        .select_related("source", "target")
        .prefetch_related("extra_sources")
        .order_by("-created_at")
    )
    return jobs.filter(state=state) if state else jobs


def api_tokens_for_user(*, user) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(owner=user, revoked_at__isnull=True)
