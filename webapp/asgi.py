"""The ASGI application the web server runs (granian --interface asgi webapp.asgi:application).

Async views (the long-poll and the event stream, webapp.api.waiting) wait on the event loop and
hold no thread; every other request is Django's sync code as before, within a slot of
webapp.serving (at most WEB_THREADS at once per process). Lifespan events are acknowledged here:
Django's handler serves HTTP only.
"""

from __future__ import annotations

import os

from asgiref.sync import iscoroutinefunction

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

from django.core.asgi import get_asgi_application
from django.db import connections
from django.urls import Resolver404, get_resolver, resolve

from webapp import serving

django_application = get_asgi_application()
# Every view imported now, at the server's start, not by its first visitor's request (measured: the
# URL configuration's imports took 1.3 s of a fresh `make run`'s first request).
get_resolver().url_patterns  # noqa: B018 - the import is the point
# Each request's sync code runs on a thread made for that request, and Django keeps a connection
# per thread: one kept open for reuse (CONN_MAX_AGE) would never be reused, only dropped with its
# thread. Closed at the end of each request instead; reuse across requests is a pooler's job
# (PgBouncer in front of PostgreSQL). Workers keep their persistent connections.
for alias in connections:
    connections.settings[alias]["CONN_MAX_AGE"] = 0


def _is_async_view(path: str) -> bool:
    try:
        return iscoroutinefunction(resolve(path).func)
    except Resolver404:
        return False


async def application(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] == "http" and _is_async_view(scope["path"][len(scope.get("root_path", "")) :] or "/"):
        await django_application(scope, receive, send)
        return
    async with serving.sync_slots():
        await django_application(scope, receive, send)
