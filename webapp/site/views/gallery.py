"""`/` for signed-in people: the gallery of their jobs (filters, pages), and its live status JSON."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.http import urlencode
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from billing import selectors as billing_selectors
from webapp.jobs import events, selectors

from ..presentation import cards_for

DASHBOARD_LIMIT = 50
GALLERY_PAGE_SIZE = 24
GALLERY_FILTERS = {
    "state": [("", _("All")), ("active", _("In progress")), ("done", _("Done")), ("failed", _("Not done"))],
    "kind": [("", _("Photos and videos")), ("image", _("Photos")), ("video", _("Videos"))],
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
    try:
        since = _since(request.GET.get("since", ""))
    except ValueError:
        return JsonResponse(
            {"error": "since must be a date and time such as 2026-02-01T12:00:00Z."}, status=400
        )
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


def _since(raw: str) -> datetime | None:
    """`since` as an aware time; ValueError for text that is not a real date and time
    (2026-02-31, T25:00, or anything parse_datetime does not recognise)."""
    if not raw:
        return None
    parsed = parse_datetime(raw)  # raises ValueError for out-of-range fields, None for other shapes
    if parsed is None:
        raise ValueError(raw)
    parsed = parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, UTC)
    try:  # 0001-01-01T00:00+05:00 is before the first representable UTC time (SQLite's adapter overflowed: a 500)
        return parsed.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError(raw) from exc


def _card_json(request: HttpRequest, card: dict) -> dict:
    return {
        "id": card["job"]["id"],
        "state": card["job"]["state"],
        "terminal": card["job"]["terminal"],
        "progress": card["job"]["progress"],
        "created_at": card["job"]["created_at"],
        "html": render_to_string("webapp/_job_card.html", {"card": card}, request=request),
    }
