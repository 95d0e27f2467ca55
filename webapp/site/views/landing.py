"""`/` for visitors: what Visage does, its prices and rules, and the engine-made examples."""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from billing import services as billing_services
from billing.choices import Mode
from webapp.jobs import examples
from webapp.media import storage
from webapp.media.storage import StorageError

from .gallery import dashboard

logger = logging.getLogger(__name__)

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
    """The engine-made before/after examples (manage.py visage_examples) as last read from S3: the
    page never waits on S3, and leaves the section out before they were ever read."""
    return examples.shown()


@require_GET
def example_picture(request: HttpRequest, slug: str, which: str) -> HttpResponse:
    """One picture of a landing example (public, like the landing page; long browser cache)."""
    try:
        data = examples.image(slug, which)
    except storage.ObjectMissing:
        raise Http404("No such example picture.") from None
    except StorageError:
        return HttpResponse(_("Storage is briefly unavailable."), status=503, content_type="text/plain")
    response = HttpResponse(data, content_type="image/jpeg")
    response["Cache-Control"] = "public, max-age=86400"
    return response
