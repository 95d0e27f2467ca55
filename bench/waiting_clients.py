"""Waiting clients vs everyone else: a normal GET's latency while 1,000 clients wait.

    python bench/waiting_clients.py [--clients 1000] [--users 50] [--server asgi|wsgi]

Starts a Redis of its own and the web server exactly as `make run` does (webapp.serving's
web_server_command, which visage_run runs: granian ASGI, 2 processes) on a fresh SQLite database, makes
--users users with a job each, opens --clients waiting clients spread over them (three in four
`GET /api/v1/jobs/{id}?wait=30&until=final`, one in four `GET /api/v1/jobs/events`), waits until
every one is blocked in Redis, then times --samples sequential `GET /api/v1/me` of another user
and prints p50/p99/max. `--server wsgi` runs the previous server (granian WSGI, 2 × 32 threads)
for comparison: there each waiting client holds a thread.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATA = Path(tempfile.mkdtemp(prefix="visage-bench-waits-"))
os.environ.update(VISAGE_DATA_DIR=str(DATA), DJANGO_SETTINGS_MODULE="webapp.settings", DEBUG="0")
os.environ.setdefault("S3_ENDPOINT", "http://127.0.0.1:9")  # never reached: nothing here reads S3

from webapp.ops import embedded  # noqa: E402

REDIS = embedded.start_redis(DATA / "redis", port=embedded.free_port(), persist=False)
os.environ["REDIS_URL"] = REDIS.url

import aiohttp  # noqa: E402
import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from webapp.accounts import services as account_services  # noqa: E402
from webapp.jobs.models import Job, Upload  # noqa: E402
from webapp.serving import web_server_command  # noqa: E402


def fixtures(users: int) -> tuple[list[tuple[str, str]], str]:
    """(token, job id) per waiting user, and the token of the user whose GETs are timed."""
    call_command("migrate", interactive=False, verbosity=0)
    User = get_user_model()
    waiting = []
    for n in range(users):
        user = User.objects.create_user(username=f"waiter{n}", password="x-bench-123")
        uploads = [
            Upload.objects.create(
                owner=user,
                role=role,
                s3_key=f"bench/{n}/{role}",
                sha256="0" * 64,
                media_type="image/png",
                width=64,
                height=64,
                size_bytes=1,
            )
            for role in ("source", "target")
        ]
        job = Job.objects.create(owner=user, source=uploads[0], target=uploads[1])
        waiting.append((account_services.api_token_create(user=user, name="bench")[1], str(job.id)))
    other = User.objects.create_user(username="other", password="x-bench-123")
    return waiting, account_services.api_token_create(user=other, name="bench")[1]


def blocked_reads() -> int:
    import redis

    return sum(1 for client in redis.Redis.from_url(REDIS.url).client_list() if client["cmd"] == "xread")


async def run(
    url: str, waiting: list[tuple[str, str]], other: str, clients: int, samples: int, settle_s: float
) -> None:
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=None)
    ) as session:

        async def hold(n: int) -> None:
            token, job_id = waiting[n % len(waiting)]
            headers = {"Authorization": f"Bearer {token}"}
            path = "/api/v1/jobs/events" if n % 4 == 3 else f"/api/v1/jobs/{job_id}?wait=30&until=final"
            while True:  # as a real client: poll again when the wait ends
                async with session.get(url + path, headers=headers) as response:
                    if response.status != 200:
                        print(f"waiting client {n}: {response.status} {await response.text()}")
                        return
                    await response.content.read()  # until the server ends it

        started = time.perf_counter()
        tasks = [asyncio.create_task(hold(n)) for n in range(clients)]
        while (blocked := blocked_reads()) < clients and time.perf_counter() - started < settle_s:
            await asyncio.sleep(0.2)
        print(f"{blocked} of {clients} clients blocked in Redis after {time.perf_counter() - started:.1f} s")
        latencies = []
        headers = {"Authorization": f"Bearer {other}"}
        for _ in range(samples):
            began = time.perf_counter()
            async with session.get(url + "/api/v1/me", headers=headers) as response:
                await response.read()
                assert response.status == 200, response.status
            latencies.append((time.perf_counter() - began) * 1000)
        latencies.sort()
        print(
            f"GET /api/v1/me while {blocked} clients wait ({samples} requests, one at a time): "
            f"p50 {statistics.median(latencies):.1f} ms, p99 {latencies[int(0.99 * (len(latencies) - 1))]:.1f} ms, "
            f"max {latencies[-1]:.1f} ms"
        )
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--server", choices=["asgi", "wsgi"], default="asgi")
    args = parser.parse_args()
    waiting, other = fixtures(args.users)
    port = str(embedded.free_port())
    command = web_server_command("127.0.0.1", port)
    command.remove("--access-log")
    if args.server == "wsgi":  # the server before the waits moved to the event loop
        command[command.index("asgi")] = "wsgi"
        command[command.index("webapp.asgi:application")] = "webapp.wsgi:application"
        command += ["--blocking-threads", "32"]
    env = dict(
        os.environ,
        VISAGE_WAITS_PER_USER=str(args.clients // args.users + 1),
        VISAGE_THROTTLE_READ="1000000/min",
    )
    log = open(DATA / "web.log", "wb")  # noqa: SIM115 - the server's log, open while it runs
    server = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    print(f"server log: {DATA / 'web.log'}")
    url = f"http://127.0.0.1:{port}"
    try:
        import requests

        for _ in range(600):
            try:
                if requests.get(url + "/api/v1/me", timeout=2).status_code == 401:
                    break
            except requests.ConnectionError:
                time.sleep(0.1)
        print(f"server: {' '.join(command[2:6])}, {args.clients} waiting clients over {args.users} users")
        # WSGI: only as many clients as threads ever block; the rest queue.
        asyncio.run(
            run(url, waiting, other, args.clients, args.samples, 300 if args.server == "asgi" else 15)
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
        REDIS.stop()


if __name__ == "__main__":
    main()
