"""Request ids: echoed in every response (and in problem+json bodies) so support can find a request."""

from __future__ import annotations

import re
import uuid

from asgiref.sync import iscoroutinefunction, markcoroutinefunction

from webapp.telemetry import context

_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestIdMiddleware:
    # Both modes: a sync-only middleware would make Django run the async views below on a thread.
    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request):
        if iscoroutinefunction(self):
            return self._acall(request)
        self._identify(request)
        with context.bound(request_id=request.request_id):  # logs and enqueued tasks carry it
            response = self.get_response(request)
        response["X-Request-Id"] = request.request_id
        return response

    async def _acall(self, request):
        self._identify(request)
        with context.bound(request_id=request.request_id):
            response = await self.get_response(request)
        response["X-Request-Id"] = request.request_id
        return response

    @staticmethod
    def _identify(request) -> None:
        incoming = request.headers.get("X-Request-Id", "")
        request.request_id = incoming if _VALID_REQUEST_ID.match(incoming) else uuid.uuid4().hex
