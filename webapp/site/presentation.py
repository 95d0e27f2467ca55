"""What the site shows about jobs: the shared job dict plus words for where each job stands."""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.timesince import timesince

from billing.choices import Mode
from webapp.jobs.choices import JobState
from webapp.jobs.models import Job
from webapp.jobs.payload import job_payload
from webapp.jobs.selectors import QueueStanding, queue_standings
from webapp.jobs.takedowns import TAKEN_DOWN_LABEL, taken_down_job_ids
from webapp.media import aigc
from webapp.media.thumbnails import preview_size

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


def warming_up_line(warming: dict) -> str:
    """What the site says while the workers are still starting (a `warming_up` block)."""
    ready_in_s = warming["ready_in_seconds"]
    when = f"ready in about {_duration(ready_in_s)}" if ready_in_s else "ready any moment now"
    return f"The swap engine is starting up · {when}"


def _status_line(job: Job, standing: QueueStanding | None, warming: dict | None = None) -> str:
    """One short sentence for a job that is still going."""
    if warming is not None:
        return f"{warming_up_line(warming)}; your swap starts as soon as it is."
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
    the change is in view at once; the middle when the engine recorded no face box. Also where the
    badge burnt into the compare's picture is (percent of it), so the page keeps the original's
    side off it at every slider position."""
    width, height = job.processed_width or 0, job.processed_height or 0
    mark = _mark_box(width, height)
    boxes = (job.engine_notes or {}).get("face_boxes") or []
    if not boxes or not width or not height:
        return {"percent": 50, "face": None, "mark": mark}
    x1, y1, x2, y2 = boxes[0]
    box = [100 * x1 / width, 100 * y1 / height, 100 * x2 / width, 100 * y2 / height]
    box = [round(min(100.0, max(0.0, v)), 2) for v in box]
    return {"percent": round((box[0] + box[2]) / 2), "face": box, "mark": mark}


def _mark_box(width: int, height: int) -> str | None:
    """The badge's box in the compare picture (marked at its own size), as CSS `inset()` insets."""
    mark = aigc.visible_mark()
    if mark is None or not width or not height:
        return None
    shown_width, shown_height = preview_size(width, height)
    x, y, w, h = mark.region(shown_width, shown_height)
    left, top = 100 * x / shown_width, 100 * y / shown_height
    right, bottom = 100 - 100 * (x + w) / shown_width, 100 - 100 * (y + h) / shown_height
    # As CSS clip-path's inset(): top right bottom left, and the plate's rounded corners (swap.mark).
    radius = mark.corner_radius(shown_width, shown_height)
    insets = " ".join(f"{max(0.0, v):.2f}%" for v in (top, right, bottom, left))
    return f"{insets} round {100 * radius / shown_width:.2f}% / {100 * radius / shown_height:.2f}%"


def cards_for(request: HttpRequest, jobs: list[Job]) -> list[dict]:
    """What a job card shows: the shared job dict plus the site's words for where it stands."""
    standings = queue_standings(jobs)
    warming: dict = {}
    taken_down = taken_down_job_ids(job.id for job in jobs if job.media_deleted_at is not None)
    cards = []
    for job in jobs:
        payload = job_payload(job, request=request, standings=standings, warming=warming)
        result = payload["result"] or {}
        cards.append(
            {
                "job": payload,
                "created_at": job.created_at,
                "ago": _ago(job.created_at),
                "label": TAKEN_DOWN_LABEL if job.id in taken_down else STATE_LABELS.get(job.state, job.state),
                "taken_down": job.id in taken_down,
                "status": _status_line(job, standings.get(job.id), payload["warming_up"]),
                "queue": standings.get(job.id),
                "is_video": (result.get("media_type") or "").startswith("video/"),
                "mode_label": Mode(job.mode).label if job.mode in Mode.values else job.mode,
                "compare": compare_start(job),
            }
        )
    return cards
