"""GET /api/v1/jobs/events: the signed-in user's job changes as Server-Sent Events.

Each event is `id: <Redis stream id>`, `event: job`, `data: {"id", "state", "progress", "version",
"terminal", "deleted", "updated_at", "url"}`, read from the user's own stream only. A client resumes
with the Last-Event-ID header (EventSource sends it when it reconnects) or `?last_event_id=`; when
events it missed were already trimmed from the stream it gets one `event: reset` (fetch your jobs
again). A `: keep-alive` comment goes out every EVENTS_KEEPALIVE_S; the response ends after
EVENTS_STREAM_MAX_S (the client reconnects). The stream waits on the event loop, not on a server
thread (webapp.api.waiting), and counts as one of the user's open waits (wait_slots).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Iterator

from django.conf import settings
from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from redis.exceptions import RedisError
from rest_framework import serializers

from webapp.jobs import events

from . import wait_slots, waiting
from .jobs import PROBLEM, ThrottledView
from .problems import problem_response
from .representations import JobEventSerializer
from .throttles import ReadThrottle

logger = logging.getLogger(__name__)

RECONNECT_MS = 3000  # EventSource's wait before it reconnects
NIL_UUID = "00000000-0000-0000-0000-000000000000"


class JobEventsView(ThrottledView):
    def get_throttles(self):
        return [ReadThrottle()]

    def perform_content_negotiation(self, request, force=False):
        # EventSource asks for text/event-stream; errors are still rendered as problem+json.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        operation_id="jobs_events",
        parameters=[
            OpenApiParameter(
                "Last-Event-ID", str, OpenApiParameter.HEADER, required=False,
                description="Resume after this event id (EventSource sends it when it reconnects).",
            ),
            OpenApiParameter("last_event_id", str, required=False, description="The same, for clients that cannot set headers."),
        ],
        responses={
            (200, "text/event-stream"): OpenApiResponse(
                JobEventSerializer,
                description="Server-Sent Events. Each `event: job` block's `data` line is a JobEvent (JSON) and its "
                "`id` the position to resume from; `event: reset` (data `{}`) means events were missed: fetch your "
                "jobs again. Comment lines (`: keep-alive`) keep the connection open.",
            ),
            400: PROBLEM,
            401: PROBLEM,
            429: PROBLEM,
            503: PROBLEM,
        },
        summary="Follow your jobs live (Server-Sent Events)",
    )
    def get(self, request):
        after = (request.headers.get("Last-Event-ID") or request.query_params.get("last_event_id") or "").strip()
        if after and not events.event_id_valid(after):
            raise serializers.ValidationError(
                {"last_event_id": f"{after!r} is not an event id from this stream (like 1733011200000-0)."}
            )
        user_id = request.user.pk
        newest = events.position(user_id=user_id)
        if newest is None:
            return problem_response(
                request, status_code=503, code="service_unavailable",
                detail="Live job events are briefly unavailable; poll GET /api/v1/jobs/{id} meanwhile.",
                headers={"Retry-After": "5"},
            )
        # An id newer than any event (made up, or from another server's stream) would wait for ever
        # for a newer one: the client fetches its jobs again and follows from now.
        future = bool(after) and events.newer(after, newest)
        reset = future or (bool(after) and events.trimmed_after(user_id=user_id, after=after))
        start = newest if future or not after else after
        events.release_database_connection()  # the stream reads Redis only, for minutes
        job_url = request.build_absolute_uri(reverse("api-job-detail", args=[NIL_UUID]))

        def respond(lease: wait_slots.Lease | None) -> EventStreamResponse:
            response = EventStreamResponse(
                event_stream(user_id=user_id, after=start, reset=reset, lease=lease, job_url=job_url),
                content_type="text/event-stream",
            )
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
            return response

        # One of the user's wait slots is taken on the event loop (webapp.api.waiting), then `respond`.
        return waiting.Stream(
            view=self, request=request, user_id=user_id, timeout_s=settings.EVENTS_STREAM_MAX_S, respond=respond
        )


class EventStreamResponse(StreamingHttpResponse):
    """Under ASGI (how Visage is served) Django runs the async body on the server's loop. Under WSGI
    (Django's test live server, a WSGI deployment) Django would first gather the whole async body
    into a list, so the stream would say nothing until it ended; here each event goes out as it
    comes instead, the body driven by a private event loop in the request's thread."""

    def __iter__(self):
        if not self.is_async:
            return super().__iter__()
        return map(self.make_bytes, _one_by_one(self._iterator))


def _one_by_one(body: AsyncIterator[str]) -> Iterator[str]:
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                yield loop.run_until_complete(anext(body))
            except StopAsyncIteration:
                return
    finally:
        try:
            loop.run_until_complete(body.aclose())  # its `finally`: the wait slot given back
        finally:
            loop.close()


async def event_stream(*, user_id: int, after: str, reset: bool, lease: wait_slots.Lease | None,
                       job_url: str) -> AsyncIterator[str]:
    """The stream's body, on the event loop; `job_url` is a job's URL with the nil UUID for its id."""
    deadline = time.monotonic() + settings.EVENTS_STREAM_MAX_S
    try:
        yield f"retry: {RECONNECT_MS}\n: connected\n\n"
        if reset:
            yield "event: reset\ndata: {}\n\n"
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                batch = await events.read(
                    user_id=user_id, after=after, block_s=min(settings.EVENTS_KEEPALIVE_S, remaining)
                )
            except RedisError as exc:
                logger.warning("user %s: event stream ended early (Redis down?): %s", user_id, exc)
                return  # the client reconnects with its Last-Event-ID
            if not batch:
                yield ": keep-alive\n\n"
                continue
            for event in batch:
                after = event.stream_id
                data = {**event.data, "url": job_url.replace(NIL_UUID, event.data["id"])}
                yield f"id: {event.stream_id}\nevent: job\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
    finally:
        await wait_slots.give_back(lease)
