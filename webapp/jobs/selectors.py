"""Read-only queries for jobs."""

from __future__ import annotations

import logging
import uuid
import weakref
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.conf import settings
from django.db import connections
from django.db.models import QuerySet
from django.utils import timezone
from rq import Worker

from webapp.media.choices import MediaKind

from . import dispatch, etags
from .choices import JobState
from .models import Job
from .states import TERMINAL_STATES

logger = logging.getLogger(__name__)


def job_etag_fields(*, user_id: int, job_id: uuid.UUID) -> dict | None:
    """The user's own job's fields its ETag is made of (etags.ETAG_FIELDS), or None: what
    `Job.objects.filter(id=job_id, owner_id=user_id).values(*ETAG_FIELDS)` gives, values converted
    by the same converters, but from SQL compiled once per connection (building and compiling that
    query was two thirds of its time, ~0.23 of 0.34 ms: a tenth of a status GET's CPU)."""
    connection = connections[Job.objects.db]
    sql, converters = _etag_select(connection)
    params = [
        Job._meta.pk.get_db_prep_value(job_id, connection),
        Job._meta.get_field("owner").get_db_prep_value(user_id, connection),
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    row = list(row)
    for position, (functions, expression) in converters.items():
        for convert in functions:
            row[position] = convert(row[position], expression, connection)
    return dict(zip(etags.ETAG_FIELDS, row, strict=True))


# Per connection object (Django keeps one per thread and alias): the converters are methods of
# that connection's operations, so each thread uses its own.
_etag_selects: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _etag_select(connection) -> tuple[str, dict]:
    """The SQL of the version read (its parameters: the job's id, then its owner's) and the
    converters of its columns, compiled once per connection object."""
    if connection not in _etag_selects:
        query = Job.objects.filter(id=uuid.UUID(int=0), owner_id=0).order_by().values(*etags.ETAG_FIELDS)[:1].query
        compiler = query.get_compiler(connection=connection)
        sql, params = compiler.as_sql()
        if len(params) != 2:
            raise RuntimeError(f"the version read should take the job's id and owner, not {params!r}")
        columns = [select[0] for select in compiler.select[: compiler.col_count]]
        _etag_selects[connection] = (sql, compiler.get_converters(columns))
    return _etag_selects[connection]


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


# --- queue standing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueStanding:
    position: int  # 1 = next to start
    # Rough, from the GPU-time estimates over the GPU workers: until a worker takes it (the work
    # ahead of it), and until its result is ready (that and its own).
    start_seconds: int
    eta_seconds: int


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
    # What the busy workers still have to do comes first: a queued photo behind a running video
    # waits for the video (counting only queued jobs once said "ready in about 1 s" for 9 s).
    seconds_ahead = _seconds_left_running()
    for position, (job_id, _queue, _queued_at, quote) in enumerate(waiting, start=1):
        start_seconds = round(seconds_ahead / workers)
        seconds_ahead += _estimate_seconds(quote)
        if job_id in wanted:
            standings[job_id] = QueueStanding(
                position=position,
                start_seconds=start_seconds,
                eta_seconds=max(1, round(seconds_ahead / workers)),
            )
    return standings


def _seconds_left_running() -> float:
    now = timezone.now()
    left = 0.0
    for quote, progress, started_at in Job.objects.filter(state=JobState.RUNNING).values_list(
        "quote", "progress", "started_at"
    )[:500]:
        estimate = _estimate_seconds(quote)
        by_progress = estimate * (100 - min(progress, 99)) / 100
        by_clock = estimate - (now - started_at).total_seconds() if started_at else estimate
        left += max(1.0, min(by_progress, by_clock) if by_clock > 0 else by_progress)
    return left


def _estimate_seconds(quote: dict | None) -> float:
    try:
        return max(1.0, float(Decimal(str((quote or {}).get("gpu_seconds_estimate", "2")))))
    except ArithmeticError:
        return 2.0


def _gpu_worker_count() -> int:
    try:
        connection = dispatch.rq_connection(settings.GPU_QUEUES[0])
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
