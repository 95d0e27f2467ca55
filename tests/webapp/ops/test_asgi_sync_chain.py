"""The ASGI application runs a request for a sync view (every page and API call but the long-poll
and the event stream) through a synchronous middleware chain: one hop onto the request's thread
for the chain and the view, not one per middleware method."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from asgiref import sync

from tests.webapp.conftest import api_client_for, post_job
from webapp import asgi
from webapp.accounts import services as account_services

pytestmark = pytest.mark.django_db(transaction=True)


def _get(path: str, headers: dict[str, str]) -> httpx.Response:
    async def get():
        transport = httpx.ASGITransport(app=asgi.application)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            return await client.get(path, headers=headers)

    return asyncio.run(get())


@pytest.fixture
def hops(monkeypatch) -> list[str]:
    """Each hop from the event loop onto a request's thread (asgiref's sync_to_async), by what ran."""
    seen: list[str] = []
    real_call = sync.SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        seen.append(getattr(self.func, "__qualname__", repr(self.func)))
        return await real_call(self, *args, **kwargs)

    monkeypatch.setattr(sync.SyncToAsync, "__call__", counted)
    return seen


def test_a_sync_view_runs_every_middleware_in_one_hop_onto_its_thread(hops):
    response = _get("/", {"Accept-Language": "zh-Hans"})  # the landing page: a template, the database
    assert response.status_code == 200, response.text
    # Every middleware of the chain ran: request id, CSP, clickjacking, language headers.
    assert response.headers["X-Request-ID"] and "Content-Security-Policy" in response.headers
    assert response.headers["X-Frame-Options"] == "DENY" and response.headers["Content-Language"] == "zh-hans"
    # request_started's receivers, the chain with the view, the response's close: Django's async
    # chain made one hop per synchronous middleware method (about twenty).
    assert len(hops) <= 4, hops


def test_a_status_get_that_does_not_wait_runs_as_a_sync_view_and_one_that_waits_still_waits(
    funded_user, astronaut_pair, hops
):
    """GET /api/v1/jobs/{id} is an async view for its long-poll (?wait=); without ?wait= the same
    DRF view answers on the sync chain: its 200 and its 304 as before."""
    _, key = account_services.api_token_create(user=funded_user, name="asgi")
    source, target, _ = astronaut_pair
    job_id = post_job(api_client_for(funded_user), source, target).json()["id"]
    bearer = {"Authorization": f"Bearer {key}"}

    hops.clear()
    plain = _get(f"/api/v1/jobs/{job_id}", bearer)
    assert plain.status_code == 200 and plain.json()["id"] == job_id and plain.headers["ETag"]
    assert len(hops) <= 4, hops
    hops.clear()
    assert _get(f"/api/v1/jobs/{job_id}", {**bearer, "If-None-Match": plain.headers["ETag"]}).status_code == 304
    assert len(hops) <= 4, hops

    hops.clear()
    waited = _get(f"/api/v1/jobs/{job_id}?wait=0.2", {**bearer, "If-None-Match": plain.headers["ETag"]})
    assert waited.status_code == 304  # waited on the event loop, nothing changed
    assert any("process_request" in hop for hop in hops)  # through the async chain, as a wait must
    assert _get("/api/v1/nowhere", bearer).status_code == 404
