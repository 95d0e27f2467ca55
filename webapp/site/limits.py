"""Budgets for the site's anonymous forms, per client address (VISAGE_TRUSTED_PROXIES): each costs
something real. A sign-up gives free credits (30 accounts from one client took 600), a password
reset sends an email to an address anyone can type (60 in a burst reached one inbox), a takedown
report runs face detection on the web server and lands in the moderators' queue.

Counted like the API's budgets (`FailOpenRedisCache.sliding_window`: N in any window of the rate's
length; Redis down: allowed). Rates as the API's: "5/hour" (VISAGE_THROTTLE_SIGNUP, ...).
"""

from __future__ import annotations

import time

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from rest_framework.throttling import SimpleRateThrottle

from webapp.accounts.client_ip import client_ip


def wait_s(request, scope: str, *, per: str = "") -> int:
    """0 when this request is within `scope`'s budget (it is counted), else the seconds until it
    would be. `per`: what is counted instead of the client's address (a reset's email address)."""
    limit, window_s = SimpleRateThrottle.parse_rate(None, settings.SITE_THROTTLE_RATES[scope])
    allowed, _, retry_after_s = cache.sliding_window(
        f"site-budget:{scope}:{per or client_ip(request)}", limit=limit, window_s=window_s, now=time.time()
    )
    return 0 if allowed else max(1, round(retry_after_s))


def refused(request: HttpRequest, template: str, context: dict, wait: int) -> HttpResponse:
    """The form again, with why and for how long (429, Retry-After)."""
    minutes = max(1, -(-wait // 60))
    messages.error(request, _("Too many attempts from your network. Please try again in %(minutes)d minutes.") % {"minutes": minutes})
    response = render(request, template, context, status=429)
    response["Retry-After"] = str(wait)
    return response
