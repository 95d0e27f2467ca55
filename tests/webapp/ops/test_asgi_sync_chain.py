"""The ASGI application serves a request for a sync view (every page and API call but the long-poll
and the event stream) as a WSGI server would: Django's WSGI handler on a long-lived pool thread, in
one hop from the event loop, not Django's ASGI handler (a thread made per request, a hop per
synchronous middleware method)."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from pathlib import Path

import httpx
import pytest
from asgiref import sync
from django.db import connection, connections

from tests.webapp.conftest import api_client_for, post_job
from webapp import asgi, serving
from webapp.accounts import services as account_services
from webapp.api.jobs import JobDetailView
from webapp.serving import max_request_bytes

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module", autouse=True)
def pool_shut_down_after():
    """The pool's threads keep their database connections: they go with the threads, before the
    test database is dropped (PostgreSQL refuses while a session is open)."""
    yield
    serving.shut_down_sync_executor()


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


def test_sync_views_run_on_the_process_pool_threads_not_a_thread_made_per_request(monkeypatch):
    """Django's ASGI handler made a thread (an executor) for every request and joined it at the
    end; the sync chain runs on webapp.serving's pool instead, whose threads outlive requests."""
    threads = []
    real = asgi.SyncViews.get_response

    def recorded(self, request):
        threads.append(threading.current_thread())
        return real(self, request)

    monkeypatch.setattr(asgi.SyncViews, "get_response", recorded)
    for _ in range(4):
        assert _get("/healthz", {}).status_code in (200, 503)
    assert len(threads) == 4
    assert all(thread.name.startswith("web-sync") for thread in threads), [t.name for t in threads]
    assert all(thread.is_alive() for thread in threads)  # kept for the next requests, not joined


def test_a_streamed_response_arrives_whole_and_headers_reach_django_as_a_wsgi_server_gives_them():
    """A static file (WhiteNoise answers with a streamed file) is sent chunk by chunk from the pool
    thread; the environ built from the ASGI scope is PEP 3333's."""
    css = (Path(__file__).resolve().parents[3] / "webapp/static/visage/visage.css").read_bytes()
    response = _get("/static/visage/visage.css", {})
    assert response.status_code == 200 and response.content == css

    scope = {
        "type": "http", "method": "POST", "path": "/app/api/v1/jobs", "root_path": "/app",
        "query_string": b"a=1&b=%C3%A9", "http_version": "2", "scheme": "https",
        "server": ("visage.example", 443), "client": ("203.0.113.9", 51000),
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"2"),
                    (b"cookie", b"a=1"), (b"cookie", b"b=2"), (b"accept", b"text/html"),
                    (b"accept", b"application/json"), (b"x-request-id", b"abc")],
    }
    environ = asgi.wsgi_environ(scope, io.BytesIO(b"{}"))
    assert (environ["SCRIPT_NAME"], environ["PATH_INFO"], environ["QUERY_STRING"]) == ("/app", "/api/v1/jobs", "a=1&b=%C3%A9")
    assert (environ["CONTENT_TYPE"], environ["CONTENT_LENGTH"]) == ("application/json", "2")
    assert environ["HTTP_COOKIE"] == "a=1; b=2"  # HTTP/2 sends each cookie as its own header
    assert environ["HTTP_ACCEPT"] == "text/html,application/json" and environ["HTTP_X_REQUEST_ID"] == "abc"
    assert (environ["wsgi.url_scheme"], environ["SERVER_NAME"], environ["SERVER_PORT"]) == ("https", "visage.example", "443")
    assert environ["REMOTE_ADDR"] == "203.0.113.9" and environ["wsgi.input"].read() == b"{}"


# --- database connections: kept by the pool's threads, closed by a waiting request's thread ---------


@pytest.fixture
def new_connections(monkeypatch) -> list[str]:
    """The name of the thread of each new database connection opened from now on."""
    opened: list[str] = []
    wrapper = type(connections["default"])
    real = wrapper.get_new_connection

    def counted(self, conn_params):
        opened.append(threading.current_thread().name)
        return real(self, conn_params)

    monkeypatch.setattr(wrapper, "get_new_connection", counted)
    return opened


def _job_and_bearer(funded_user, astronaut_pair) -> tuple[str, dict[str, str]]:
    _, key = account_services.api_token_create(user=funded_user, name="asgi")
    source, target, _ = astronaut_pair
    return post_job(api_client_for(funded_user), source, target).json()["id"], {"Authorization": f"Bearer {key}"}


def test_a_pool_thread_keeps_its_database_connection_from_one_request_to_the_next(
    funded_user, astronaut_pair, new_connections
):
    """As a WSGI server's threads do: a status GET reuses its thread's connection (CONN_MAX_AGE),
    not one opened and closed per request (that was a third of a 304's time on SQLite)."""
    job_id, bearer = _job_and_bearer(funded_user, astronaut_pair)
    threads = []
    real = asgi.SyncViews.get_response

    def recorded(self, request):
        threads.append(threading.current_thread().name)
        return real(self, request)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(asgi.SyncViews, "get_response", recorded)
        for _ in range(10):
            assert _get(f"/api/v1/jobs/{job_id}", bearer).status_code == 200
    assert len(threads) == 10
    assert len(new_connections) <= len(set(threads)), (new_connections, threads)


@pytest.mark.skipif(connections["default"].vendor != "postgresql", reason="a server that can drop a connection")
def test_a_connection_the_database_dropped_costs_a_reconnect_not_a_failed_request(funded_user, astronaut_pair):
    """A restart or failover of PostgreSQL drops every kept connection: each is checked before its
    thread reuses it (CONN_HEALTH_CHECKS), so no request answers 500 for it."""
    job_id, bearer = _job_and_bearer(funded_user, astronaut_pair)
    for _ in range(3):
        assert _get(f"/api/v1/jobs/{job_id}", bearer).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        assert cursor.fetchall(), "the pool's threads held no connection to drop"
    for _ in range(6):
        response = _get(f"/api/v1/jobs/{job_id}", bearer)
        assert response.status_code == 200, response.text


def test_a_waiting_request_leaves_no_database_connection_on_the_thread_made_for_it(
    funded_user, astronaut_pair, new_connections
):
    """A long-poll's sync steps run on a thread Django's ASGI handler makes for the request: the
    connection it opened there is closed at the request's end, never left behind with the thread."""
    job_id, bearer = _job_and_bearer(funded_user, astronaut_pair)
    used = []
    real = JobDetailView._answer

    def answer(self, request, job_id, **kwargs):
        used.append(connections["default"])  # the request thread's connection handle
        return real(self, request, job_id, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(JobDetailView, "_answer", answer)
        response = _get(f"/api/v1/jobs/{job_id}?wait=0.2", bearer)  # no ETag: a 200 after the wait
    assert response.status_code == 200 and response.json()["id"] == job_id
    assert new_connections and not any(name.startswith("web-sync") for name in new_connections)
    assert len(used) == 1 and used[0].connection is None


def _http_scope(method: str, path: str, headers: list[tuple[bytes, bytes]] = ()) -> dict:
    return {
        "type": "http", "method": method, "path": path, "query_string": b"", "root_path": "",
        "headers": [(b"host", b"localhost"), *headers], "server": ("localhost", 80),
        "client": ("203.0.113.9", 5555), "scheme": "http", "http_version": "1.1",
    }


def test_slow_request_bodies_hold_no_slot(settings):
    """Anyone could stall the site: a slot (a pool thread's worth) was taken before the body was
    read, so WEB_THREADS uploads sending their bodies slowly held them all and every other request
    waited (a /livez never answered). The body is read first now."""

    async def main() -> list[dict]:
        never = asyncio.Event()

        async def trickle() -> dict:  # the headers came; the body never does
            await never.wait()
            return {"type": "http.disconnect"}

        async def discard(message: dict) -> None:
            pass

        scope = _http_scope("POST", "/api/v1/jobs", [(b"content-length", b"1000")])
        slow = [asyncio.create_task(asgi.application(scope, trickle, discard)) for _ in range(settings.WEB_THREADS)]
        await asyncio.sleep(0.2)
        sent: list[dict] = []

        async def empty() -> dict:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def keep(message: dict) -> None:
            sent.append(message)

        try:
            # A bound against hanging the suite, not a measurement: it answers in milliseconds.
            await asyncio.wait_for(asgi.application(_http_scope("GET", "/livez"), empty, keep), timeout=30)
        finally:
            never.set()
            await asyncio.gather(*slow, return_exceptions=True)
        return sent

    sent = asyncio.run(main())
    assert sent[0]["status"] == 200


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
@pytest.mark.parametrize("path", ["/api/v1/jobs", "/upload/"])
def test_a_body_over_every_limit_is_refused_before_it_is_read(user_a, declared, path):
    """It was written whole to a temporary file first (200 MiB here; a terabyte declared), then 413."""
    chunk, chunks = b"x" * (1024 * 1024), 200
    read = {"count": 0, "at_answer": None}

    async def receive() -> dict:
        read["count"] += 1
        return {"type": "http.request", "body": chunk, "more_body": read["count"] < chunks}

    sent: list[dict] = []

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            read["at_answer"] = read["count"]
        sent.append(message)

    headers = [(b"content-type", b"multipart/form-data; boundary=x")]
    if declared:
        headers.append((b"content-length", str(10**12).encode()))
    asyncio.run(asgi.application(_http_scope("POST", path, headers), receive, send))
    assert sent[0]["status"] == 413
    limit_chunks = max_request_bytes() // len(chunk)
    assert read["at_answer"] == (0 if declared else limit_chunks + 1)
    if path.startswith("/api/"):
        assert json.loads(sent[1]["body"])["code"] == "request_too_large"
