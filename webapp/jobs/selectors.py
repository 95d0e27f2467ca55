"""Read-only queries for jobs."""

from __future__ import annotations

from datetime import date

from django.db.models import QuerySet

from webapp.media.choices import MediaKind

from .choices import JobState
from .models import Job
from .states import TERMINAL_STATES


def jobs_for_user(
    *, user, state: str | None = None, query: str = "", favourite: bool | None = None
) -> QuerySet[Job]:
    """`query`: words in the target's original file name (jobs made before names were kept have none);
    `favourite`: only starred (True) or unstarred (False) jobs."""
    jobs = (
        Job.objects.filter(owner=user)
        .select_related("source", "target")
        .prefetch_related("extra_sources", "share_links")
        .order_by("-created_at")
    )
    if state:
        jobs = jobs.filter(state=state)
    for word in query.split()[:8]:
        jobs = jobs.filter(target__original_name__icontains=word)
    if favourite is not None:
        jobs = jobs.filter(favourite=favourite)
    return jobs


# The gallery's state filter: a few groups a person thinks in, not the nine lifecycle states.
GALLERY_STATE_GROUPS: dict[str, tuple[str, ...]] = {
    "active": tuple(s for s in JobState.values if s not in TERMINAL_STATES),
    "done": (JobState.SUCCEEDED,),
    "failed": (JobState.FAILED, JobState.REJECTED, JobState.CANCELED),
}


def jobs_for_gallery(
    *, user, state_group: str = "", kind: str = "", day_from: date | None = None, day_to: date | None = None,
    query: str = "", favourites_only: bool = False,
) -> QuerySet[Job]:
    """The dashboard's jobs, newest first: `state_group` one of GALLERY_STATE_GROUPS, `kind` "image" or
    "video" (the target's), days inclusive (UTC), `query` words in the target's file name."""
    jobs = jobs_for_user(user=user, query=query, favourite=True if favourites_only else None)
    if state_group in GALLERY_STATE_GROUPS:
        jobs = jobs.filter(state__in=GALLERY_STATE_GROUPS[state_group])
    if kind in MediaKind.values:
        jobs = jobs.filter(target__kind=kind)
    if day_from:
        jobs = jobs.filter(created_at__date__gte=day_from)
    if day_to:
        jobs = jobs.filter(created_at__date__lte=day_to)
    return jobs


def jobs_awaiting_review() -> QuerySet[Job]:
    """The moderation queue, oldest first."""
    return Job.objects.filter(state=JobState.REVIEW).order_by("created_at")


def owner_history(*, user) -> dict[str, int]:
    """How many of a user's jobs ended in each state (a moderator's context for a decision)."""
    counts = dict.fromkeys(JobState.values, 0)
    for state in Job.objects.filter(owner=user).values_list("state", flat=True):
        counts[state] += 1
    return counts
