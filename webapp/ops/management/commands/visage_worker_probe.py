"""`manage.py visage_worker_probe`: exit 0 when this host's worker heartbeats, 1 otherwise.

The liveness/readiness probe of worker containers (deploy/k8s, the images' HEALTHCHECK). It reads
the RQ worker records in Redis, keeps those written from this host by a process that is still
alive, and checks that their last heartbeat is recent: an idle worker beats while it waits for
work, a busy one from a thread while its job runs (webapp.jobs.worker). A process that exists but
lost Redis, or whose loop no longer runs, fails; so does a host with no registered worker.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime

import django_rq
from django.core.management.base import BaseCommand, CommandError
from rq import Worker

from webapp.jobs.worker import WORKER_TTL_S


def process_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    return True


class Command(BaseCommand):
    help = "Exit 0 when every live Visage worker process on this host has a fresh heartbeat in Redis."

    def add_arguments(self, parser):
        parser.add_argument("--max-age-s", type=float, default=WORKER_TTL_S + 30,
                            help="Oldest acceptable heartbeat, in seconds (an idle worker beats every "
                                 f"{WORKER_TTL_S - 15} s).")

    def handle(self, *args, max_age_s, **options):
        host = socket.gethostname()
        try:
            workers = Worker.all(connection=django_rq.get_connection("default"))
        except Exception as exc:  # Redis unreachable: the worker cannot work either
            raise CommandError(f"cannot read the worker records from Redis: {exc}") from exc
        mine = [w for w in workers if w.hostname == host and process_alive(w.pid)]
        if not mine:
            raise CommandError(f"no live worker process of host {host} is registered in Redis")
        now = datetime.now(UTC)
        stale = []
        for worker in mine:
            beat = worker.last_heartbeat
            age_s = (now - beat.replace(tzinfo=beat.tzinfo or UTC)).total_seconds() if beat else float("inf")
            if age_s > max_age_s:
                stale.append(f"{worker.name} (pid {worker.pid}): last heartbeat {age_s:.0f} s ago")
        if stale:
            raise CommandError("stale worker heartbeat: " + "; ".join(stale))
        self.stdout.write(f"ok: {len(mine)} worker(s) on {host} heartbeating "
                          f"({', '.join(f'{w.name} {w.get_state()}' for w in mine)})")
