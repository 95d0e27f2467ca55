"""Read-only queries for jobs."""

from __future__ import annotations

from django.db.models import QuerySet

from .models import Job


def jobs_for_user(*, user, state: str | None = None) -> QuerySet[Job]:
    jobs = (
        Job.objects.filter(owner=user)
        .select_related("source", "target")
        .prefetch_related("extra_sources")
        .order_by("-created_at")
    )
    return jobs.filter(state=state) if state else jobs
