"""What the site shows about jobs: the shared job dict plus words for where each job stands."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

import django_rq
from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.timesince import timesince
from rq import Worker

from billing.choices import Mode
from webapp.jobs.choices import JobState
from webapp.jobs.models import Job
from webapp.jobs.payload import job_payload

logger = logging.getLogger(__name__)

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
    # What the busy workers still have to do comes first: a queued photo behind a running video
    # waits for the video (counting only queued jobs once said "ready in about 1 s" for 9 s).
    seconds_ahead = _seconds_left_running()
    for position, (job_id, _queue, _queued_at, quote) in enumerate(waiting, start=1):
        estimate = _estimate_seconds(quote)
        seconds_ahead += estimate
        if job_id in wanted:
            standings[job_id] = QueueStanding(
                position=position, eta_seconds=max(1, round(seconds_ahead / workers))
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
    if job.state == JobState.CREATED:
        return "Submitted · the content check starts in a moment…"
    if job.state == JobState.SCREENING:
        return "Checking the photos against our content rules…"
    if job.state == JobState.REVIEW:
        return "A person is reviewing this swap; that usually takes a few minutes."
    if job.state == JobState.QUEUED:
        if standing is None:
            return "Waiting for a free worker…"
        place = "Next in line" if standing.position == 1 else f"{_ordinal(standing.position)} in line"
        return f"{place} · ready in about {_duration(standing.eta_seconds)}" if standing.eta_seconds >= 5 else f"{place} · starting in a moment"
    if job.state == JobState.RUNNING:
        return f"Swapping faces… {job.progress}%"
    return ""


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


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


def compare_start(job: Job) -> dict:
    """Where the before/after slider opens: on the swapped face (the first the engine swapped), so
    the change is in view at once; the middle when the engine recorded no face box."""
    boxes = (job.engine_notes or {}).get("face_boxes") or []
    width, height = job.processed_width or 0, job.processed_height or 0
    if not boxes or not width or not height:
        return {"percent": 50, "face": None}
    x1, y1, x2, y2 = boxes[0]
    box = [100 * x1 / width, 100 * y1 / height, 100 * x2 / width, 100 * y2 / height]
    box = [round(min(100.0, max(0.0, v)), 2) for v in box]
    return {"percent": round((box[0] + box[2]) / 2), "face": box}


def cards_for(request: HttpRequest, jobs: list[Job]) -> list[dict]:
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
                "compare": compare_start(job),
            }
        )
    return cards
