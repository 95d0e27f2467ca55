"""The ASGI application the web server runs (granian --interface asgi webapp.asgi:application).

Async views (the long-poll and the event stream, webapp.api.waiting) wait on the event loop and
hold no thread (Django's ASGI handler); every other request is served as a WSGI server serves it
(SyncViews, serve_sync), within a slot of webapp.serving (at most WEB_THREADS at once per process).
Lifespan events are acknowledged here: Django's handler serves HTTP only.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import sys
import tempfile
from urllib.parse import parse_qs

from asgiref.sync import iscoroutinefunction

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

from django.conf import settings
from django.core.asgi import get_asgi_application
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished
from django.db import connections
from django.dispatch import receiver
from django.urls import Resolver404, get_resolver, resolve

from webapp import serving
from webapp.serving import API_PREFIX, max_request_bytes

django_application = get_asgi_application()  # the async views: the long-poll, the event stream

from webapp.api import wait_slots  # noqa: E402 - its models need the apps loaded (above)


class SyncViews(WSGIHandler):
    """Requests to sync views (every page and API call but the long-poll and the event stream) are
    served as a WSGI server serves them: Django's WSGI handler (its middleware chain synchronous;
    request_started, the view, the response's close and request_finished) in ONE call on a thread
    of the process's pool (webapp.serving.sync_executor), whose threads outlive requests.

    Django's ASGI handler made a thread (an executor) for every request and joined it at the end,
    and hopped between the event loop and threads for the signals, the chain and the close (with
    its async chain, one hop per synchronous middleware method): a job's 304 GET took 4.2-4.7 ms of
    CPU under it with the chain synchronous, 3.2-3.5 ms served this way (2-core machine, wrk c=16).
    Measured in docs/operations/serving.md."""

    def resolve_request(self, request):
        """A waiting view's sync view (webapp.api.waiting.waiting_view) for a request that does not wait."""
        match = super().resolve_request(request)
        match.func = getattr(match.func, "sync_view", match.func)
        return match


sync_views = SyncViews()
# Every view imported now, at the server's start, not by its first visitor's request (measured: the
# URL configuration's imports took 1.3 s of a fresh `make run`'s first request).
get_resolver().url_patterns  # noqa: B018 - the import is the point


@receiver(request_finished, sender=ASGIHandler)
def close_connections_of_a_waiting_request(**kwargs) -> None:
    """The waiting views' sync steps run on a thread Django's ASGI handler made for their request
    (ThreadSensitiveContext), and Django keeps a connection per thread: one left open there would
    never be reused, only dropped with its thread. Closed when such a request ends. Sync views'
    requests (SyncViews) keep theirs: the pool's threads outlive requests and reuse their
    connection (CONN_MAX_AGE), as a WSGI server's threads do."""
    connections.close_all()


def _waits(scope) -> bool:
    """Whether the request goes to an async view and needs it: the event stream always, the job's
    GET only with ?wait= (without it, the same view answers at once: it runs as a sync view)."""
    waits, only_with = _waiting_view(scope["path"][len(scope.get("root_path", "")) :] or "/")
    if not waits:
        return False
    return not only_with or only_with in parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


@functools.lru_cache(maxsize=4096)
def _waiting_view(path: str) -> tuple[bool, str]:
    """(whether the path's view is an async one, the query parameter it waits only with): resolved
    once per path (a client polls the same job's URL), not on the event loop for every request."""
    try:
        view = resolve(path).func
    except Resolver404:
        return False, ""
    return iscoroutinefunction(view), getattr(view, "waits_only_with", "")


async def application(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        serving.shut_down_sync_executor()
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] == "http" and _waits(scope):
        # The wait slots it still holds when it ends are given back (a client gone early: wait_slots).
        async with wait_slots.given_back_at_the_end():
            await django_application(scope, receive, send)
        return
    if scope["type"] != "http":
        raise ValueError(f"Only HTTP and lifespan are served, not {scope['type']}.")
    await serve_sync(scope, receive, send)


async def serve_sync(scope, receive, send) -> None:
    """A request to a sync view: the body read here, then Django's WSGI handler on a pool thread
    (one hop); a response with its body in memory is sent from here, a streaming one chunk by
    chunk from that thread.

    The body is read before the request takes one of the process's slots (webapp.serving): a
    client sending it slowly holds a coroutine, not a slot (32 slow uploads held every slot, and
    every other page waited). A body over the largest request anything accepts
    (serving.max_request_bytes) is not read (by its Content-Length) or not read further
    (a chunked one): it is refused with a 413 (problem+json under /api/, by the middleware, which
    sees the length and no body), not written to a temporary file first."""
    limit = max_request_bytes()
    with tempfile.SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE, mode="w+b") as body:
        received = _declared_length(scope)
        if received <= limit:
            received = 0
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return  # gone before it finished asking: nothing to answer
                chunk = message.get("body", b"")
                received += len(chunk)
                if received > limit:
                    break
                body.write(chunk)
                if not message.get("more_body", False):
                    break
        environ = wsgi_environ(scope, body)
        if received > limit:
            if not scope["path"].startswith(API_PREFIX):
                await _too_large(send)
                return
            body.truncate(0)
            environ["CONTENT_LENGTH"] = str(received)  # the middleware answers it, reading nothing
        body.seek(0)
        loop = asyncio.get_running_loop()
        # A copy of the request's context: what the chain sets (the log context) ends with it.
        context = contextvars.copy_context()
        async with serving.sync_slots():
            start, content = await loop.run_in_executor(
                serving.sync_executor(), context.run, _respond, environ, send, loop
            )
    if content is not None:
        await send(start)
        await send({"type": "http.response.body", "body": content})


def _declared_length(scope) -> int:
    """The request's Content-Length (0 when absent or not a number: the middleware answers that)."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            return int(value) if value.isdigit() else 0
    return 0


async def _too_large(send) -> None:
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": b"The request body is too large."})


def _respond(environ: dict, send, loop: asyncio.AbstractEventLoop) -> tuple[dict, bytes | None]:
    """On a pool thread: the response's start message and its whole body; a streaming response is
    sent from here as it is produced (body None)."""
    answer: dict = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info=None) -> None:
        answer["type"] = "http.response.start"
        answer["status"] = int(status.split(" ", 1)[0])
        answer["headers"] = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]

    response = sync_views(environ, start_response)
    try:
        if not getattr(response, "streaming", False):
            return answer, b"".join(response)

        async def send_now(message: dict) -> None:
            await send(message)  # the server's send may return any awaitable (granian's is no coroutine)

        def sent(message: dict) -> None:
            asyncio.run_coroutine_threadsafe(send_now(message), loop).result()

        sent(answer)
        for chunk in response:
            if chunk:
                sent({"type": "http.response.body", "body": chunk, "more_body": True})
        sent({"type": "http.response.body", "body": b""})
        return answer, None
    finally:
        response.close()  # request_finished: this thread's connection care, as under WSGI


def wsgi_environ(scope: dict, body) -> dict:
    """The WSGI environ of an ASGI HTTP scope (PEP 3333; the headers as a WSGI server gives them:
    repeated ones joined by commas, cookies by semicolons)."""
    script_name = scope.get("root_path", "")
    path = scope["path"]
    if script_name and path.startswith(script_name):
        path = path[len(script_name) :]
    server = scope.get("server") or ("localhost", 80)
    environ = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": script_name.encode("utf-8").decode("latin-1"),
        "PATH_INFO": path.encode("utf-8").decode("latin-1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "SERVER_NAME": server[0],
        "SERVER_PORT": str(server[1] if server[1] is not None else 80),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": body,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if scope.get("client"):
        environ["REMOTE_ADDR"] = scope["client"][0]
        environ["REMOTE_PORT"] = str(scope["client"][1])
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        key = name if name in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{name}"
        value = raw_value.decode("latin-1")
        if key in environ:
            value = environ[key] + ("; " if key == "HTTP_COOKIE" else ",") + value
        environ[key] = value
    return environ
