"""Status without polling: job events on Redis Streams, SSE, ETag/304 and long-poll.

Real Redis and database; jobs move through the same guarded transitions the workers use. Nothing
waits on the clock to synchronise: a test that needs a request to be blocked waits for the
request's own XREAD to start.
"""

from __future__ import annotations

import json
import threading
import uuid
from decimal import Decimal

import pytest
from django.db import connection, connections
from django.db.models.sql.compiler import SQLCompiler
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from tests.helpers.problems import assert_problem
from tests.helpers.sse import chunks, job_events, parse
from tests.webapp.conftest import post_job
from webapp.api.jobs import JobDetailView
from webapp.jobs import etags, events, selectors
from webapp.jobs.choices import JobState
from webapp.jobs.models import Job
from webapp.jobs.services import lifecycle
from webapp.jobs.states import transition

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def bounded_streams(settings):
    # A safety net only: a broken stream ends instead of hanging the run (no test relies on it).
    settings.EVENTS_STREAM_MAX_S = 20


def new_job(client, astronaut_pair) -> str:
    source, target, _ = astronaut_pair
    response = post_job(client, source, target)
    assert response.status_code == 201, response.content
    return response.json()["id"]


def to_running(job_id: str) -> None:
    assert transition(job_id, from_states=[JobState.CREATED], to_state=JobState.SCREENING)
    assert transition(job_id, from_states=[JobState.SCREENING], to_state=JobState.QUEUED)
    assert lifecycle.job_start(job_id)


def sse(client, **headers):
    response = client.get("/api/v1/jobs/events", headers={"Accept": "text/event-stream", **headers})
    assert response.status_code == 200, getattr(response, "content", b"")
    assert response["Content-Type"].startswith("text/event-stream")
    return response


# --- events -----------------------------------------------------------------------------------------


def test_one_job_events_arrive_in_order_with_rising_versions(api_a, astronaut_pair):
    job_id = new_job(api_a, astronaut_pair)
    to_running(job_id)
    lifecycle.job_progress(job_id, 40)
    lifecycle.job_progress(job_id, 40)  # the same figure again: no new event
    lifecycle.job_progress(job_id, 80)
    assert lifecycle.job_fail(job_id, code="engine_error", message="boom")
    assert api_a.delete(f"/api/v1/jobs/{job_id}").status_code == 204

    response = sse(api_a, **{"Last-Event-ID": "0"})
    blocks = job_events(response, 8)
    response.close()
    seen = [(b["data"]["state"], b["data"]["progress"]) for b in blocks]
    assert seen == [
        ("created", 0), ("screening", 0), ("queued", 0), ("running", 5), ("running", 40), ("running", 80),
        ("failed", 80), ("failed", 0),
    ]
    assert [b["data"]["deleted"] for b in blocks] == [False] * 7 + [True]
    versions = [b["data"]["version"] for b in blocks]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert all(b["data"]["id"] == job_id for b in blocks)
    assert blocks[0]["data"]["url"].endswith(f"/api/v1/jobs/{job_id}")
    assert blocks[6]["data"]["terminal"] is True
    ids = [b["id"] for b in blocks]
    assert ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-")))) and len(set(ids)) == len(ids)


def test_resuming_with_last_event_id_misses_nothing(api_a, astronaut_pair):
    job_id = new_job(api_a, astronaut_pair)
    response = sse(api_a, **{"Last-Event-ID": "0"})
    (created,) = job_events(response, 1)
    assert transition(job_id, from_states=[JobState.CREATED], to_state=JobState.SCREENING)
    (screening,) = job_events(response, 1)
    response.close()  # the client goes away; the job moves on meanwhile
    assert transition(job_id, from_states=[JobState.SCREENING], to_state=JobState.QUEUED)
    assert lifecycle.job_start(job_id)
    lifecycle.job_progress(job_id, 50)

    resumed = sse(api_a, **{"Last-Event-ID": screening["id"]})
    missed = job_events(resumed, 3)
    resumed.close()
    assert [b["data"]["state"] for b in (created, screening, *missed)] == [
        "created", "screening", "queued", "running", "running"
    ]
    assert missed[-1]["data"]["progress"] == 50
    # Clients that cannot set headers pass it in the query.
    by_query = api_a.get(f"/api/v1/jobs/events?last_event_id={missed[0]['id']}")
    assert [b["id"] for b in job_events(by_query, 2)] == [b["id"] for b in missed[1:]]
    by_query.close()


def test_a_stream_starts_at_now_without_last_event_id(api_a, astronaut_pair):
    old = new_job(api_a, astronaut_pair)
    response = sse(api_a)
    assert parse(next(chunks(response)))["retry"]  # the stream is open
    newer = new_job(api_a, astronaut_pair)
    (first,) = job_events(response, 1)
    response.close()
    assert first["data"]["id"] == newer != old


def test_users_never_see_each_others_jobs(api_a, api_b, user_b, client, astronaut_pair):
    a_job = new_job(api_a, astronaut_pair)
    b_job = new_job(api_b, astronaut_pair)
    to_running(a_job)
    lifecycle.job_progress(a_job, 30)
    assert transition(b_job, from_states=[JobState.CREATED], to_state=JobState.SCREENING)

    client.force_login(user_b)  # the site's session works as well as a token
    response = sse(client, **{"Last-Event-ID": "0"})
    blocks = job_events(response, 2)
    response.close()
    assert {b["data"]["id"] for b in blocks} == {b_job}
    assert all(entry_id and a_job not in raw for entry_id, raw in _raw_stream(user_b.pk))
    assert_problem(api_b.get(f"/api/v1/jobs/{a_job}?wait=1"), 404, "not_found")


def _raw_stream(user_id: int):
    return [(entry_id, fields["event"]) for entry_id, fields in events._client("quick").xrange(events.stream_key(user_id))]


def test_unauthenticated_event_stream_is_a_401_problem():
    response = APIClient().get("/api/v1/jobs/events", headers={"Accept": "text/event-stream"})
    assert_problem(response, 401, "not_authenticated")


def test_a_malformed_last_event_id_is_a_400_problem(api_a):
    body = assert_problem(api_a.get("/api/v1/jobs/events", headers={"Last-Event-ID": "yesterday"}), 400,
                          "validation_error", "last_event_id")
    assert "yesterday" in body["detail"]


def test_stream_sends_keep_alives_and_ends_by_itself(api_a, settings):
    settings.EVENTS_KEEPALIVE_S = 0.05
    settings.EVENTS_STREAM_MAX_S = 0.5
    blocks = [parse(chunk) for chunk in chunks(sse(api_a))]  # ends: the client reconnects
    assert blocks[0]["retry"] == "3000"
    assert {"comment": "keep-alive"} in blocks[1:]


def test_a_waiting_stream_or_long_poll_holds_no_database_connection(api_a, astronaut_pair, monkeypatch):
    """Waiting clients must not hold a PostgreSQL connection (the one of the thread that served them)."""
    job_id = new_job(api_a, astronaut_pair)
    response = sse(api_a)
    assert parse(next(chunks(response)))["retry"] == "3000"  # open, about to wait
    assert connection.connection is None
    response.close()

    held = []
    waited = events.job_updates
    request_thread_connection = connections["default"]  # the wait itself runs on an event loop

    async def job_updates(**kwargs):
        held.append(request_thread_connection.connection is not None)
        async for event in waited(**{**kwargs, "timeout_s": 0.05}):
            yield event

    monkeypatch.setattr(events, "job_updates", job_updates)
    assert api_a.get(f"/api/v1/jobs/{job_id}?wait=30").status_code == 200
    assert held == [False]


def test_a_redis_outage_never_fails_a_transition(api_a, astronaut_pair, monkeypatch, caplog):
    import redis

    job_id = new_job(api_a, astronaut_pair)
    dead = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=1, decode_responses=True)
    monkeypatch.setattr(events, "_client", lambda kind: dead)
    assert transition(job_id, from_states=[JobState.CREATED], to_state=JobState.SCREENING)
    lifecycle.job_progress(job_id, 10)  # not running: nothing to publish, nothing fails
    assert Job.objects.get(id=job_id).state == JobState.SCREENING
    assert "could not publish" in caplog.text
    # Reads fall back to the database; a long-poll answers at once instead of failing.
    response = api_a.get(f"/api/v1/jobs/{job_id}?wait=30")
    assert response.status_code == 200 and response.json()["state"] == "screening"


# --- ETag and 304 -------------------------------------------------------------------------------------


def version_reads_only(queries) -> bool:
    """The request read the job's version fields by primary key (one query, no joins) and nothing
    else: the database, not a Redis-side record, says which version is current."""
    sqls = [q["sql"] for q in queries]
    return (len(sqls) == 1 and '"webapp_job"' in sqls[0] and "JOIN" not in sqls[0] and "ORDER BY" not in sqls[0]
            and '"version"' in sqls[0])


def test_etag_answers_304_with_one_version_query_and_changes_with_every_transition(api_a, astronaut_pair):
    job_id = new_job(api_a, astronaut_pair)
    first = api_a.get(f"/api/v1/jobs/{job_id}")
    etag = first["ETag"]
    assert first.status_code == 200 and etag.startswith('"') and etag.endswith('"')
    with CaptureQueriesContext(connection) as queries:
        cached = api_a.get(f"/api/v1/jobs/{job_id}", headers={"If-None-Match": etag})
    assert cached.status_code == 304 and cached["ETag"] == etag and not cached.content
    assert version_reads_only(queries), "a 304 reads the row's version, never the whole job"
    assert api_a.get(f"/api/v1/jobs/{job_id}", headers={"If-None-Match": f'W/{etag}'}).status_code == 304

    assert transition(job_id, from_states=[JobState.CREATED], to_state=JobState.SCREENING)
    changed = api_a.get(f"/api/v1/jobs/{job_id}", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.json()["state"] == "screening"
    assert changed["ETag"] != etag
    assert api_a.get(f"/api/v1/jobs/{job_id}", headers={"If-None-Match": changed["ETag"]}).status_code == 304


def test_the_version_read_gives_what_the_orm_gives_and_compiles_no_sql_after_its_first(
    api_a, api_b, astronaut_pair, monkeypatch
):
    """selectors.job_etag_fields runs SQL compiled once: its rows are the ORM's .values() rows, value
    for value and type for type (the ETag hashes their text), in every state a job passes through,
    and none for another user's job or a missing one."""
    def orm(job_id, user_id):
        return Job.objects.filter(id=job_id, owner_id=user_id).values(*etags.ETAG_FIELDS).first()

    job_id = uuid.UUID(new_job(api_a, astronaut_pair))
    owner = Job.objects.get(id=job_id).owner_id
    to_running(job_id)
    lifecycle.job_progress(job_id, 40)
    Job.objects.filter(id=job_id).update(cost=Decimal("0.0500"), completed_at=timezone.now(), error_message="x")
    compiled = []
    real = SQLCompiler.as_sql
    monkeypatch.setattr(SQLCompiler, "as_sql", lambda self, *a, **k: compiled.append(1) or real(self, *a, **k))
    selectors.job_etag_fields(user_id=owner, job_id=job_id)  # compiled here at most once
    compiled.clear()
    read = selectors.job_etag_fields(user_id=owner, job_id=job_id)
    assert compiled == []
    expected = orm(job_id, owner)
    assert read == expected and [type(v) for v in read.values()] == [type(v) for v in expected.values()]
    assert etags.representation(read).etag() == etags.representation(expected).etag()
    assert selectors.job_etag_fields(user_id=owner + 1000, job_id=job_id) is None
    assert selectors.job_etag_fields(user_id=owner, job_id=uuid.uuid4()) is None


def test_a_plain_get_of_an_unchanged_job_is_served_from_the_cache_and_every_transition_shows(
    api_a, astronaut_pair
):
    job_id = new_job(api_a, astronaut_pair)
    first = api_a.get(f"/api/v1/jobs/{job_id}")
    with CaptureQueriesContext(connection) as queries:
        again = api_a.get(f"/api/v1/jobs/{job_id}")
    assert again.status_code == 200 and again.json() == first.json() and again["ETag"] == first["ETag"]
    assert version_reads_only(queries), "an unchanged job's body comes from the cache"

    for to_state, shown in ((JobState.SCREENING, "screening"), (JobState.QUEUED, "queued")):
        before = api_a.get(f"/api/v1/jobs/{job_id}")
        assert transition(job_id, from_states=[JobState(before.json()["state"])], to_state=to_state)
        after = api_a.get(f"/api/v1/jobs/{job_id}")
        assert after.json()["state"] == shown and after["ETag"] != before["ETag"]
    starred = api_a.patch(f"/api/v1/jobs/{job_id}", {"favourite": True}, format="json")
    assert starred.status_code == 200
    assert api_a.get(f"/api/v1/jobs/{job_id}").json()["favourite"] is True


def test_a_cached_body_keeps_the_host_it_was_asked_on(api_a, astronaut_pair, settings):
    settings.ALLOWED_HOSTS = ["testserver", "other.example"]
    job_id = new_job(api_a, astronaut_pair)
    api_a.get(f"/api/v1/jobs/{job_id}")
    elsewhere = api_a.get(f"/api/v1/jobs/{job_id}", HTTP_HOST="other.example")
    assert elsewhere.json()["urls"]["self"].startswith("http://other.example/")
    assert api_a.get(f"/api/v1/jobs/{job_id}").json()["urls"]["self"].startswith("http://testserver/")


def test_a_late_reader_cannot_make_a_stale_etag_current(api_a, astronaut_pair):
    """A request that loaded the row just before a transition records its (old) representation just
    after the transition's publish: the record must not go back, so the old ETag never gets a 304."""
    job_id = new_job(api_a, astronaut_pair)
    old_etag = api_a.get(f"/api/v1/jobs/{job_id}")["ETag"]
    loaded_before = Job.objects.get(id=job_id)
    assert transition(job_id, from_states=[JobState.CREATED], to_state=JobState.SCREENING)
    assert events.remember(loaded_before) == old_etag  # the late reader
    response = api_a.get(f"/api/v1/jobs/{job_id}", headers={"If-None-Match": old_etag})
    assert response.status_code == 200 and response.json()["state"] == "screening"


def test_other_users_etag_record_is_never_used(api_a, api_b, astronaut_pair):
    job_id = new_job(api_a, astronaut_pair)
    etag = api_a.get(f"/api/v1/jobs/{job_id}")["ETag"]
    assert_problem(api_b.get(f"/api/v1/jobs/{job_id}", headers={"If-None-Match": etag}), 404, "not_found")
    assert_problem(api_b.get(f"/api/v1/jobs/{job_id}", headers={"If-None-Match": "*"}), 404, "not_found")


def test_job_list_has_an_etag_that_follows_its_jobs(api_a, astronaut_pair):
    job_id = new_job(api_a, astronaut_pair)
    etag = api_a.get("/api/v1/jobs")["ETag"]
    assert api_a.get("/api/v1/jobs", headers={"If-None-Match": etag}).status_code == 304
    lifecycle.job_progress(job_id, 10)  # not running: no change
    assert api_a.get("/api/v1/jobs", headers={"If-None-Match": etag}).status_code == 304
    assert transition(job_id, from_states=[JobState.CREATED], to_state=JobState.SCREENING)
    changed = api_a.get("/api/v1/jobs", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.json()["results"][0]["state"] == "screening"


# --- long-poll ------------------------------------------------------------------------------------------


def _change_once_waiting(monkeypatch, change):
    """Run `change` in another thread as soon as the request blocks on its event stream."""
    blocked = threading.Event()
    real_read = events.read_job

    async def read_job(**kwargs):
        blocked.set()
        return await real_read(**kwargs)

    monkeypatch.setattr(events, "read_job", read_job)

    def run():
        try:
            assert blocked.wait(timeout=60)
            change()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.parametrize("conditional", [True, False], ids=["if-none-match", "from-arrival"])
def test_long_poll_returns_on_a_change_made_by_another_thread(api_a, astronaut_pair, monkeypatch, conditional):
    job_id = new_job(api_a, astronaut_pair)
    to_running(job_id)
    etag = api_a.get(f"/api/v1/jobs/{job_id}")["ETag"]
    thread = _change_once_waiting(monkeypatch, lambda: lifecycle.job_progress(job_id, 60))
    headers = {"If-None-Match": etag} if conditional else {}
    response = api_a.get(f"/api/v1/jobs/{job_id}?wait=30", headers=headers)
    thread.join()
    assert response.status_code == 200
    assert response.json()["progress"] == 60
    assert response["ETag"] != etag


def test_long_poll_ignores_other_jobs_and_answers_304_after_the_wait(api_a, astronaut_pair, monkeypatch):
    job_id = new_job(api_a, astronaut_pair)
    other = new_job(api_a, astronaut_pair)
    to_running(job_id)
    etag = api_a.get(f"/api/v1/jobs/{job_id}")["ETag"]
    thread = _change_once_waiting(
        monkeypatch, lambda: transition(other, from_states=[JobState.CREATED], to_state=JobState.SCREENING)
    )
    response = api_a.get(f"/api/v1/jobs/{job_id}?wait=0.5", headers={"If-None-Match": etag})
    thread.join()
    assert response.status_code == 304 and response["ETag"] == etag
    unconditional = api_a.get(f"/api/v1/jobs/{job_id}?wait=0.2")
    assert unconditional.status_code == 200 and unconditional.json()["progress"] == 5


def _xreads() -> int:
    return int(events._client("quick").info("commandstats").get("cmdstat_xread", {}).get("calls", 0))


def test_the_users_other_jobs_never_wake_a_long_poll(api_a, funded_user, astronaut_pair, monkeypatch):
    """A long-poll blocks once for its whole wait while the same user's other jobs change: it reads its
    job's own stream. On the user's stream every change of any of the user's jobs woke every one of
    the user's long-polls (each then read again): an app's back end holding 16 long-polls under one
    account read each event 16 times."""
    job_id = new_job(api_a, astronaut_pair)
    others = [new_job(api_a, astronaut_pair) for _ in range(3)]
    to_running(job_id)
    etag = api_a.get(f"/api/v1/jobs/{job_id}")["ETag"]

    def change_the_others():
        for other in others:
            assert transition(other, from_states=[JobState.CREATED], to_state=JobState.SCREENING)
            assert transition(other, from_states=[JobState.SCREENING], to_state=JobState.QUEUED)

    thread = _change_once_waiting(monkeypatch, change_the_others)
    before = _xreads()
    response = api_a.get(f"/api/v1/jobs/{job_id}?wait=0.5", headers={"If-None-Match": etag})
    thread.join()
    assert response.status_code == 304
    assert _xreads() - before == 1
    # The job's own stream holds its events under the ids they have on the user's stream.
    lifecycle.job_progress(job_id, 60)
    own = events._client("quick").xrange(events.job_stream_key(job_id))
    users = dict(events._client("quick").xrange(events.stream_key(funded_user.pk)))
    assert own and all(users[entry_id] == fields for entry_id, fields in own)
    assert [json.loads(fields["event"])["id"] for _, fields in own] == [job_id] * len(own)


def test_long_poll_until_final_sleeps_through_progress(api_a, astronaut_pair, monkeypatch):
    """?until=final: a progress change wakes the wait but does not answer it, nor reads the job (the
    event says it is not final); the final state does."""
    job_id = new_job(api_a, astronaut_pair)
    to_running(job_id)
    reads = threading.Semaphore(0)
    real_read = events.read_job
    loads = []
    real_load = JobDetailView._load
    monkeypatch.setattr(JobDetailView, "_load", staticmethod(lambda request, pk: loads.append(pk) or real_load(request, pk)))

    async def read_job(**kwargs):
        reads.release()  # one release per time the request blocks on its stream
        return await real_read(**kwargs)

    monkeypatch.setattr(events, "read_job", read_job)

    def run():
        try:
            assert reads.acquire(timeout=60)
            lifecycle.job_progress(job_id, 60)
            assert reads.acquire(timeout=60)  # the request went back to waiting after the progress
            assert lifecycle.job_fail(job_id, code="engine_error", message="boom")
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    response = api_a.get(f"/api/v1/jobs/{job_id}?wait=30&until=final")
    thread.join()
    assert response.status_code == 200 and response.json()["state"] == "failed"
    assert len(loads) == 2  # before the wait, and on the final event: none for the progress


@pytest.mark.parametrize("query", ["until=final", "wait=5&until=done"])
def test_until_needs_wait_and_final(api_a, astronaut_pair, query):
    job_id = new_job(api_a, astronaut_pair)
    assert_problem(api_a.get(f"/api/v1/jobs/{job_id}?{query}"), 400, "validation_error", field="until")


def test_long_poll_on_a_finished_job_answers_at_once(api_a, astronaut_pair, monkeypatch):
    job_id = new_job(api_a, astronaut_pair)
    assert lifecycle.job_fail(job_id, code="engine_error", message="boom")
    monkeypatch.setattr(events, "read", lambda **kwargs: pytest.fail("a finished job must not wait"))
    first = api_a.get(f"/api/v1/jobs/{job_id}?wait=30")
    assert first.status_code == 200 and first.json()["state"] == "failed"
    assert "Retry-After" not in first
    assert api_a.get(f"/api/v1/jobs/{job_id}?wait=30", headers={"If-None-Match": first["ETag"]}).status_code == 304


@pytest.mark.parametrize("wait", ["0", "-1", "30.5", "31", "soon", "nan", "inf", ""])
def test_wait_out_of_range_is_a_400_problem(api_a, astronaut_pair, wait):
    job_id = new_job(api_a, astronaut_pair)
    body = assert_problem(api_a.get(f"/api/v1/jobs/{job_id}?wait={wait}"), 400, "validation_error", "wait")
    assert "at most 30" in body["detail"]
