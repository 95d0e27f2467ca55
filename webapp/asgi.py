"""The ASGI application the web server runs (granian --interface asgi webapp.asgi:application).

Async views (the long-poll and the event stream, webapp.api.waiting) wait on the event loop and
hold no thread; every other request is Django's sync code as before, within a slot of
webapp.serving (at most WEB_THREADS at once per process). Lifespan events are acknowledged here:
Django's handler serves HTTP only.
"""

from __future__ import annotations

import os
from urllib.parse import parse_qs

from asgiref.sync import iscoroutinefunction, sync_to_async

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

from django.core.asgi import get_asgi_application
from django.core.handlers.asgi import ASGIHandler
from django.db import connections
from django.urls import Resolver404, get_resolver, resolve

from webapp import serving

django_application = get_asgi_application()  # the async views: the long-poll, the event stream


class SyncChainHandler(ASGIHandler):
    """Django's ASGI handler with its middleware chain built synchronous, for requests to sync views:
    the whole chain and the view run in one hop onto the request's thread. Under the async chain
    Django adapts each synchronous middleware method (process_request, process_response of
    sessions, locale, CSRF, auth, messages...) with a hop of its own onto that thread and back:
    about twenty per request. Measured on the 2-core CI machine (bench/jobpath.py's status GETs,
    wrk c=16): see docs/operations/serving.md."""

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)

    def resolve_request(self, request):
        """A waiting view's sync view (webapp.api.waiting.waiting_view) for a request that does not wait."""
        match = super().resolve_request(request)
        match.func = getattr(match.func, "sync_view", match.func)
        return match

    async def get_response_async(self, request):
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


sync_view_application = SyncChainHandler()
# Every view imported now, at the server's start, not by its first visitor's request (measured: the
# URL configuration's imports took 1.3 s of a fresh `make run`'s first request).
get_resolver().url_patterns  # noqa: B018 - the import is the point
# Each request's sync code runs on a thread made for that request, and Django keeps a connection
# per thread: one kept open for reuse (CONN_MAX_AGE) would never be reused, only dropped with its
# thread. Closed at the end of each request instead; reuse across requests is a pooler's job
# (PgBouncer in front of PostgreSQL). Workers keep their persistent connections.
for alias in connections:
    connections.settings[alias]["CONN_MAX_AGE"] = 0


def _waits(scope) -> bool:
    """Whether the request goes to an async view and needs it: the event stream always, the job's
    GET only with ?wait= (without it, the same view answers at once: it runs as a sync view)."""
    try:
        view = resolve(scope["path"][len(scope.get("root_path", "")) :] or "/").func
    except Resolver404:
        return False
    if not iscoroutinefunction(view):
        return False
    only_with = getattr(view, "waits_only_with", "")
    return not only_with or only_with in parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


async def application(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] == "http" and _waits(scope):
        await django_application(scope, receive, send)
        return
    async with serving.sync_slots():
        await sync_view_application(scope, receive, send)
