"""What the site shows about jobs: the shared job dict plus words for where each job stands."""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.timesince import timesince
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from billing.choices import Mode
from webapp.jobs.choices import STATE_LABELS, JobState
from webapp.jobs.models import Job
from webapp.jobs.payload import job_payload
from webapp.jobs.selectors import QueueStanding, queue_standings
from webapp.jobs.takedowns import TAKEN_DOWN_LABEL, taken_down_job_ids
from webapp.media import aigc
from webapp.media.thumbnails import preview_size


def warming_up_line(warming: dict) -> str:
    """What the site says while the workers are still starting (a `warming_up` block)."""
    ready_in_s = warming["ready_in_seconds"]
    if ready_in_s:
        return _("The swap engine is starting up · ready in about %(duration)s") % {"duration": _duration(ready_in_s)}
    return _("The swap engine is starting up · ready any moment now")


def _status_line(job: Job, standing: QueueStanding | None, warming: dict | None = None) -> str:
    """One short sentence for a job that is still going."""
    if warming is not None:
        return _("%(warming_up)s; your swap starts as soon as it is.") % {"warming_up": warming_up_line(warming)}
    if job.state == JobState.CREATED:
        return _("Submitted · the content check starts in a moment…")
    if job.state == JobState.SCREENING:
        return _("Checking the photos against our content rules…")
    if job.state == JobState.REVIEW:
        return _("A person is reviewing this swap; that usually takes a few minutes.")
    if job.state == JobState.QUEUED:
        if standing is None:
            return _("Waiting for a free worker…")
        if standing.position == 1:
            place = _("Next in line")
        else:
            place = _("%(ordinal)s in line") % {"ordinal": _ordinal(standing.position)}
        if standing.eta_seconds >= 5:
            return _("%(place)s · ready in about %(duration)s") % {"place": place, "duration": _duration(standing.eta_seconds)}
        return _("%(place)s · starting in a moment") % {"place": place}
    if job.state == JobState.RUNNING:
        return _("Swapping faces… %(progress)d%%") % {"progress": job.progress}
    return ""


def _ordinal(n: int) -> str:
    if not get_language().startswith("en"):
        return _("No. %(number)d") % {"number": n}  # 第 N 位: the catalogue words the whole line
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _duration(seconds: int) -> str:
    if seconds < 60:
        return _("%(seconds)d s") % {"seconds": seconds}
    minutes = round(seconds / 60)
    if minutes < 90:
        return _("%(minutes)d min") % {"minutes": minutes}
    return _("%(hours)d h") % {"hours": round(minutes / 60)}


def _ago(moment: datetime) -> str:
    seconds = (timezone.now() - moment).total_seconds()
    if seconds < 60:
        return _("just now")
    if seconds < 7 * 86400:
        return _("%(time)s ago") % {"time": timesince(moment, depth=1)}
    # English keeps its short "Dec 2, 2026"; other languages their own date format (2026年12月2日).
    return date_format(timezone.localtime(moment), "M j, Y" if get_language().startswith("en") else "DATE_FORMAT")


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
                "label": _(TAKEN_DOWN_LABEL) if job.id in taken_down else _(STATE_LABELS.get(job.state, job.state)),
                "taken_down": job.id in taken_down,
                "status": _status_line(job, standings.get(job.id), payload["warming_up"]),
                "queue": standings.get(job.id),
                "is_video": (result.get("media_type") or "").startswith("video/"),
                "mode_label": Mode(job.mode).label if job.mode in Mode.values else job.mode,
                "compare": compare_start(job),
            }
        )
    return cards
