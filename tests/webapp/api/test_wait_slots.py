"""At most VISAGE_WAITS_PER_USER long-polls and event streams per user: the next is a 429 problem
with Retry-After; other users are not counted; a slot left by a server that died expires."""

from __future__ import annotations

import asyncio
import logging
import time

import django_rq
import pytest

from tests.helpers.problems import assert_problem
from tests.helpers.sse import chunks, parse
from tests.webapp.conftest import post_job
from webapp.api import wait_slots
from webapp.ops.embedded import free_port

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def two_waits_per_user(settings):
    settings.WAITS_PER_USER = 2
    settings.EVENTS_STREAM_MAX_S = 20  # a safety net only: a broken stream ends instead of hanging the run


def new_job(client, astronaut_pair) -> str:
    source, target, _ = astronaut_pair
    response = post_job(client, source, target)
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_a_wait_over_the_cap_is_a_429_problem_with_retry_after(api_a, user_a, astronaut_pair):
    job_id = new_job(api_a, astronaut_pair)
    for _ in range(2):
        asyncio.run(wait_slots.take(user_id=user_a.pk, seconds=30))  # two waits already open
    long_poll = api_a.get(f"/api/v1/jobs/{job_id}?wait=30&until=final")
    assert_problem(long_poll, 429, "too_many_waits")
    assert 1 <= int(long_poll["Retry-After"]) <= 30
    stream = api_a.get("/api/v1/jobs/events", headers={"Accept": "text/event-stream"})
    assert_problem(stream, 429, "too_many_waits")
    assert int(stream["Retry-After"]) >= 1
    # A plain GET does not wait, so it is never counted.
    assert api_a.get(f"/api/v1/jobs/{job_id}").status_code == 200


def test_another_users_waits_do_not_count(api_a, api_b, user_a, astronaut_pair):
    job_id = new_job(api_b, astronaut_pair)
    for _ in range(2):
        asyncio.run(wait_slots.take(user_id=user_a.pk, seconds=30))
    response = api_b.get(f"/api/v1/jobs/{job_id}?wait=0.1")
    assert response.status_code == 200 and response.json()["id"] == job_id


def test_a_finished_wait_gives_its_slot_back(api_a, user_a, astronaut_pair, settings):
    job_id = new_job(api_a, astronaut_pair)
    for _ in range(3):  # one more than the cap, one after another: each gives its slot back
        assert api_a.get(f"/api/v1/jobs/{job_id}?wait=0.1").status_code == 200
    settings.EVENTS_KEEPALIVE_S, settings.EVENTS_STREAM_MAX_S = 0.05, 0.3
    leases = django_rq.get_connection("default")
    stream = api_a.get("/api/v1/jobs/events", headers={"Accept": "text/event-stream"})
    reader = chunks(stream)
    assert parse(next(reader))["retry"] == "3000"
    assert leases.zcard(wait_slots.leases_key(user_a.pk)) == 1  # the open stream
    assert [parse(chunk) for chunk in reader]  # until the stream ends by itself
    assert leases.zcard(wait_slots.leases_key(user_a.pk)) == 0
    # (A client that goes away: tests/chaos/test_waiting_clients.py, against the real server.)


def test_slots_left_by_a_dead_server_expire(api_a, user_a, astronaut_pair):
    job_id = new_job(api_a, astronaut_pair)
    past = time.time() - wait_slots.GRACE_S - 1  # waits that ended long ago and were never given back
    django_rq.get_connection("default").zadd(
        wait_slots.leases_key(user_a.pk), {"dead-1": past, "dead-2": past}
    )
    assert api_a.get(f"/api/v1/jobs/{job_id}?wait=0.1").status_code == 200


def test_a_short_wait_taken_after_a_long_one_does_not_cut_the_long_ones_slot(user_a):
    """The leases share one key: its expiry is the longest lease's (plus the grace), so a 20 s
    long-poll opened beside a 300 s event stream no longer drops the stream's lease at 50 s (the
    user could then open one wait more than the cap)."""
    leases = django_rq.get_connection("default")
    key = wait_slots.leases_key(user_a.pk)
    asyncio.run(wait_slots.take(user_id=user_a.pk, seconds=300))
    asyncio.run(wait_slots.take(user_id=user_a.pk, seconds=20))
    assert leases.ttl(key) >= 300 + wait_slots.GRACE_S - 2
    leases.delete(key)


def test_a_wait_taken_while_redis_is_down_is_let_in_and_leaves_nothing_to_give_back(settings, caplog):
    """Redis down: the take lets the wait in (it ends at once anyway: it reads Redis) with one
    warning. Its lease is not given back at the request's end (it expires by itself): no second
    try at a Redis that is down, which warned again and could wait its whole answer time."""
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there

    async def one_request():
        async with wait_slots.given_back_at_the_end():
            return await wait_slots.take(user_id=1, seconds=20)

    with caplog.at_level(logging.WARNING, logger="webapp.api.wait_slots"):
        assert asyncio.run(one_request()) is None
    warnings = [r.getMessage() for r in caplog.records if r.name == "webapp.api.wait_slots"]
    assert len(warnings) == 1 and "could not count open waits" in warnings[0], warnings
