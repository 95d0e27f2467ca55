"""Long-polls and event streams against the real server (granian ASGI, as `make run` starts it) hold
no server thread: with more waits open than the server has threads for sync code, another user's
/api/v1/me is answered while every wait is still open. A client that goes away gives its slot back;
a wait past the process's cap (its Redis connections) answers at once."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import django_rq
import pytest
import requests

from tests.helpers.waiting import wait_until
from tests.helpers.worker_process import database_url_for_subprocess
from tests.webapp.conftest import post_job
from webapp.api import wait_slots
from webapp.ops.embedded import free_port

pytestmark = pytest.mark.django_db(transaction=True)

SYNC_THREADS = 2  # the server's threads for sync code (WEB_THREADS): fewer than the waits below
WAITS = 12


def one_process(port: int) -> list[str]:
    return [sys.executable, "-m", "granian", "--interface", "asgi", "webapp.asgi:application",
            "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]


def start_web(tmp_path, command=one_process, **env):
    """granian ASGI (`command(port)`: one process by default) on the test database, `env` over the
    test's environment; yields its URL, stopped afterwards."""
    port = free_port()
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="webapp.settings",
        DATABASE_URL=database_url_for_subprocess(),
        DEBUG="0",
        **env,
    )
    log = (tmp_path / "web.log").open("wb")
    process = subprocess.Popen(
        command(port), env=env, start_new_session=True, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"

    def answering():
        assert process.poll() is None, (tmp_path / "web.log").read_text()[-3000:]
        try:
            return requests.get(f"{url}/api/v1/me", timeout=5).status_code == 401
        except requests.ConnectionError:
            return False

    wait_until(answering, timeout_s=60, what="the web server")
    yield url
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=20)


@pytest.fixture
def web(tmp_path):
    yield from start_web(tmp_path, WEB_THREADS=str(SYNC_THREADS), VISAGE_WAITS_PER_USER=str(WAITS + 1))


@pytest.fixture
def web_with_two_waits(tmp_path):
    yield from start_web(tmp_path, VISAGE_WAITS_PER_PROCESS="2")


def test_the_real_server_streams_a_static_file_whole(web):
    """A streamed response (WhiteNoise's file) is sent chunk by chunk from the pool thread through
    granian's own `send` (an awaitable that is no coroutine: ASGI test transports hide that)."""
    css = (Path(__file__).resolve().parents[2] / "webapp/static/visage/visage.css").read_bytes()
    response = requests.get(f"{web}/static/visage/visage.css", timeout=30)
    assert response.status_code == 200 and response.content == css
    assert response.headers["Content-Type"].startswith("text/css")


def blocked_reads() -> int:
    return sum(1 for client in django_rq.get_connection("default").client_list() if client["cmd"] == "xread")


def test_open_waits_do_not_delay_another_users_request(web, api_a, api_b, astronaut_pair):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]  # no worker: it stays "created"
    waiter = {"Authorization": api_a._credentials["HTTP_AUTHORIZATION"]}
    other = {"Authorization": api_b._credentials["HTTP_AUTHORIZATION"]}
    finished: list[str] = []

    async def long_poll(session):
        async with session.get(f"{web}/api/v1/jobs/{job_id}?wait=20&until=final", headers=waiter) as response:
            assert response.status == 200
            finished.append("wait")

    async def stream(session):
        async with session.get(f"{web}/api/v1/jobs/events", headers=waiter) as response:
            assert response.status == 200
            await response.content.readuntil(b"\n\n")  # connected
            await asyncio.sleep(20)  # hold it open
            finished.append("wait")

    async def scenario():
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            waits = [asyncio.create_task(long_poll(session)) for _ in range(WAITS - 2)]
            waits += [asyncio.create_task(stream(session)) for _ in range(2)]
            await asyncio.to_thread(
                wait_until,
                lambda: blocked_reads() >= WAITS,
                timeout_s=60,
                what=f"{WAITS} waits blocked in Redis",
            )
            async with session.get(f"{web}/api/v1/me", headers=other) as me:
                assert me.status == 200 and (await me.json())["username"] == "bob"
                finished.append("me")
            open_waits = sum(not task.done() for task in waits)
            for task in waits:
                task.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
            return open_waits

    open_waits = asyncio.run(scenario())
    assert finished[0] == "me" and open_waits == WAITS  # answered while every wait was still open


def test_a_client_that_goes_away_gives_its_slot_back(web, api_a, user_a, astronaut_pair):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    headers = {"Authorization": api_a._credentials["HTTP_AUTHORIZATION"]}
    leases = django_rq.get_connection("default")

    async def scenario():
        async with aiohttp.ClientSession() as session:
            poll = asyncio.create_task(session.get(f"{web}/api/v1/jobs/{job_id}?wait=20", headers=headers))
            async with session.get(f"{web}/api/v1/jobs/events", headers=headers) as response:
                await response.content.readuntil(b"\n\n")
                await asyncio.to_thread(
                    wait_until,
                    lambda: leases.zcard(wait_slots.leases_key(user_a.pk)) == 2,
                    timeout_s=60,
                    what="two open waits",
                )
            poll.cancel()
            await asyncio.gather(poll, return_exceptions=True)

    asyncio.run(scenario())
    wait_until(
        lambda: leases.zcard(wait_slots.leases_key(user_a.pk)) == 0,
        timeout_s=15,  # at once in practice; the leases would last 20 s and 300 s
        what="both slots given back after their clients went away",
    )


def test_clients_that_go_away_at_any_moment_give_every_slot_back(web, api_a, user_a, astronaut_pair):
    """Each client sends its request and hangs up from at once to 20 ms later: while the view's sync
    part runs, while the slot is taken, while the wait starts. Before: 42 of 120 slots were never
    given back (taken on the view's thread after the request was cancelled, or the cancel lost by
    the Redis client, the wait going on for its 20 s or 300 s)."""
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    authorization = api_a._credentials["HTTP_AUTHORIZATION"]
    leases = django_rq.get_connection("default")
    address = urlsplit(web)
    for attempt in range(WAITS * 5):
        for path in (f"/api/v1/jobs/{job_id}?wait=20", "/api/v1/jobs/events"):
            with socket.create_connection((address.hostname, address.port)) as client:
                client.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: {authorization}\r\n\r\n".encode())
                time.sleep((attempt % 21) / 1000)
    wait_until(
        lambda: leases.zcard(wait_slots.leases_key(user_a.pk)) == 0,
        timeout_s=15,
        what="every slot given back after its client went away",
    )


def test_a_wait_past_the_process_cap_answers_at_once_with_the_job_as_it_is(
    web_with_two_waits, api_a, user_a, astronaut_pair
):
    """Each open wait holds a Redis connection (VISAGE_WAITS_PER_PROCESS bounds them per process):
    one more is answered at once, never a 500, while the others still wait."""
    web = web_with_two_waits
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]  # no worker: it stays "created"
    headers = {"Authorization": api_a._credentials["HTTP_AUTHORIZATION"]}
    url = f"{web}/api/v1/jobs/{job_id}?wait=20&until=final"

    async def scenario():
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            waits = [asyncio.create_task(session.get(url, headers=headers)) for _ in range(2)]
            # This user's two wait slots taken (blocked reads alone also count another test's web
            # process whose waits have not timed out yet: in a random order the third came too early).
            leases = django_rq.get_connection("default")
            await asyncio.to_thread(
                wait_until,
                lambda: leases.zcard(wait_slots.leases_key(user_a.pk)) == 2 and blocked_reads() >= 2,
                timeout_s=60,
                what="two waits blocked",
            )
            async with session.get(url, headers=headers) as third:
                answered = third.status, (await third.json())["state"]
            still_waiting = sum(not task.done() for task in waits)
            for task in waits:
                task.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
            return answered, still_waiting

    assert asyncio.run(scenario()) == ((200, "created"), 2)


MANY_WAITS = 140  # more than granian admits at once per worker by default with a 128 backlog (backlog / workers)


@pytest.fixture
def web_as_run(tmp_path, settings):
    """The server exactly as the image starts it (`manage.py visage_web`, which runs
    webapp.serving.web_server_command, as `make run` does: two workers), with a small listen backlog
    (given after `--`, as the image passes options to granian) so that granian's default admission
    (backlog / workers = 64 requests at once per worker) is below the open waits."""
    settings.WAITS_PER_PROCESS = 200
    manage = str(Path(__file__).resolve().parents[2] / "manage.py")
    yield from start_web(
        tmp_path,
        command=lambda port: [sys.executable, manage, "visage_web", "--host", "127.0.0.1", "--port", str(port),
                              "--", "--backlog", "128"],
        VISAGE_WAITS_PER_USER=str(MANY_WAITS + 1),
        VISAGE_WAITS_PER_PROCESS=str(settings.WAITS_PER_PROCESS),
    )


def test_waits_up_to_the_process_cap_never_hold_back_other_requests(web_as_run, api_a, api_b, astronaut_pair):
    """granian admits at most `--backpressure` requests at once per worker (by default its listen
    backlog / workers: 512 with 2 workers), whatever they are: past that, every new request waited
    in the kernel's queue until a wait ended (up to 30 s for a long-poll, 300 s for a stream),
    although Visage lets a process hold VISAGE_WAITS_PER_PROCESS (5,000) waits."""
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]  # no worker: it stays "created"
    waiter = {"Authorization": api_a._credentials["HTTP_AUTHORIZATION"]}
    other = {"Authorization": api_b._credentials["HTTP_AUTHORIZATION"]}

    async def scenario():
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            waits = [
                asyncio.create_task(session.get(f"{web_as_run}/api/v1/jobs/{job_id}?wait=25&until=final", headers=waiter))
                for _ in range(MANY_WAITS)
            ]
            await asyncio.to_thread(
                wait_until, lambda: blocked_reads() >= MANY_WAITS, timeout_s=60, what=f"{MANY_WAITS} waits blocked"
            )
            answered = []
            for _ in range(4):  # each may go to either worker
                async with session.get(f"{web_as_run}/api/v1/me", headers=other) as me:
                    answered.append(me.status)
            open_waits = sum(not task.done() for task in waits)
            for task in waits:
                task.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
            return answered, open_waits

    assert asyncio.run(scenario()) == ([200] * 4, MANY_WAITS)  # answered while every wait was open
