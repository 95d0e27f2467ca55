"""API views that wait (the long-poll, the event stream) without holding a server thread.

DRF views are synchronous. `waiting_view(ViewClass)` runs the view as usual (authentication,
throttling, validation, the first read: everything DRF does, on the request's thread within a
webapp.serving slot) as an async Django view. A view that has to wait answers a `Wait`: on the
event loop, it takes one of the user's wait slots, then a `LongPoll` awaits its XREAD BLOCK on the
job's event stream there, each event and the timeout going back to the view's own code on a
thread, whose answer DRF renders as before (errors as problem+json); a `Stream` (the event stream)
answers a response whose body, an async generator, waits on the loop too. Under WSGI (the test
client) the same code runs, on a thread Django adapts.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from rest_framework.response import Response

from webapp import serving
from webapp.jobs import events

from . import wait_slots
from .problems import problem_response


class Wait(Response):
    """A view's "wait for it": what the view's sync part answers instead of a response when the
    request has to wait. `answer()`, on the event loop, takes one of the user's wait slots
    (webapp.api.wait_slots) and waits; a user with every slot taken gets the 429."""

    def __init__(self, *, view, request, user_id: int, timeout_s: float):
        super().__init__()
        self.view, self.drf_request, self.user_id, self.timeout_s = view, request, user_id, timeout_s

    async def answer(self):
        raise NotImplementedError

    async def _take_slot(self) -> tuple[wait_slots.Lease | None, Response | None]:
        """(the slot, None), or (None, the 429 problem) when the user's slots are all taken."""
        try:
            return await wait_slots.take(user_id=self.user_id, seconds=self.timeout_s), None
        except wait_slots.TooManyWaits as refusal:
            return None, await serving.run_sync(self._respond, too_many_waits, self.drf_request, refusal)

    def _respond(self, step: Callable, *args):
        """`step` as DRF's dispatch would run a handler: exceptions become problem responses."""
        try:
            response = step(*args)
            if response is None:
                return None
        except Exception as exc:  # noqa: BLE001 - DRF's handle_exception re-raises what it does not map
            response = self.view.handle_exception(exc)
        return self.view.finalize_response(self.drf_request, response)


class LongPoll(Wait):
    """Wait for `job_id`'s events after `after` for `timeout_s`; each event goes to `on_event` (a
    response ends the wait, None waits on), the end of the wait to `on_timeout`."""

    def __init__(self, *, job_id, after: str, on_event: Callable, on_timeout: Callable, **wait):
        super().__init__(**wait)
        self.job_id, self.after, self.on_event, self.on_timeout = job_id, after, on_event, on_timeout

    async def answer(self):
        lease, refused = await self._take_slot()
        if refused is not None:
            return refused
        try:
            async for event in events.job_updates(job_id=self.job_id, after=self.after, timeout_s=self.timeout_s):
                response = await serving.run_sync(self._respond, self.on_event, event)
                if response is not None:
                    return response
            return await serving.run_sync(self._respond, self.on_timeout)
        finally:
            await wait_slots.give_back(lease)


class Stream(Wait):
    """A streamed response of at most `timeout_s`: `respond(lease)` makes it, and its body gives
    the slot back when it ends."""

    def __init__(self, *, respond: Callable[[wait_slots.Lease | None], HttpResponseBase], **wait):
        super().__init__(**wait)
        self.respond = respond

    async def answer(self):
        lease, refused = await self._take_slot()
        if refused is not None:
            return refused
        return await serving.run_sync(self._respond, self.respond, lease)


def too_many_waits(request, refusal: wait_slots.TooManyWaits):
    return problem_response(
        request,
        status_code=429,
        code="too_many_waits",
        detail="You have too many long-polls and event streams open at once; close one or wait for one "
        "to end.",
        headers={"Retry-After": str(refusal.retry_after_s)},
    )


def waiting_view(view_class, *, waits_only_with: str = "") -> Callable:
    """`view_class.as_view()` as an async view: its waits hold no thread. `waits_only_with`: the
    query parameter without which the view answers at once (the long-poll's "wait")."""
    sync_view = view_class.as_view()

    async def view(request, *args, **kwargs):
        response = await serving.run_sync(sync_view, request, *args, **kwargs)
        if isinstance(response, Wait):
            response = await response.answer()
        return response

    # What DRF and drf-spectacular read off an as_view() callable (the schema stays the same).
    view.cls, view.initkwargs = sync_view.cls, sync_view.initkwargs
    if waits_only_with:
        # A request without this query parameter never waits: the ASGI application runs it as a
        # sync view (webapp.asgi.SyncViews), served as a WSGI server would, on a pool thread.
        view.sync_view, view.waits_only_with = sync_view, waits_only_with
    view.__name__ = view.__qualname__ = view_class.__name__
    return csrf_exempt(view)
