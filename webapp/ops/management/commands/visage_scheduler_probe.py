"""`manage.py visage_scheduler_probe`: exit 0 when this host's scheduler loop heartbeats, 1 otherwise.

The liveness/readiness probe of the scheduler container (deploy/k8s scheduler.yaml, compose). RQ's
scheduler (`visage_scheduler`) writes its record in Redis (`rq:scheduler:<name>`: hostname, pid,
last heartbeat) at the top of every loop, once a second, before it moves due jobs; the record
expires a minute after the last beat. A scheduler that hangs in its loop (a Redis call that never
returns, a stuck enqueue) instead of exiting stops beating: it stalled every retry and delayed
webhook forever, and now fails this probe and is restarted. A standby scheduler (no locks) beats
too, and passes.
"""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import django_rq
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler

from webapp.ops.management.commands.visage_worker_probe import process_alive

MAX_AGE_S = 60.0  # the loop beats every second; RQ lets the record expire after 61 s


def scheduler_records(connection) -> list[RQScheduler]:
    records = []
    for key in connection.scan_iter(match=SCHEDULER_KEY_TEMPLATE % "*", count=100):
        name = (key.decode() if isinstance(key, bytes) else key).rsplit(":", 1)[1]
        raw = connection.hgetall(key)
        if not raw:
            continue  # expired between the scan and the read
        scheduler = RQScheduler([], connection=connection, name=name)
        scheduler.restore(raw)
        records.append(scheduler)
    return records


class Command(BaseCommand):
    help = "Exit 0 when every live scheduler process on this host has a fresh heartbeat in Redis."

    def add_arguments(self, parser):
        parser.add_argument("--max-age-s", type=float, default=MAX_AGE_S,
                            help="Oldest acceptable heartbeat, in seconds (the loop beats every second).")

    def handle(self, *args, max_age_s, **options):
        host = socket.gethostname()
        try:
            records = scheduler_records(django_rq.get_connection(settings.WEBHOOK_QUEUE))
        except Exception as exc:  # Redis unreachable: the scheduler cannot work either
            raise CommandError(f"cannot read the scheduler records from Redis: {exc}") from exc
        mine = [s for s in records if s.hostname == host and process_alive(s.pid)]
        if not mine:
            raise CommandError(f"no live scheduler process of host {host} is registered in Redis")
        now = datetime.now(UTC)
        stale = []
        for scheduler in mine:
            beat = scheduler.last_heartbeat
            age_s = (now - beat.replace(tzinfo=beat.tzinfo or UTC)).total_seconds() if beat else float("inf")
            if age_s > max_age_s:
                stale.append(f"{scheduler.name} (pid {scheduler.pid}): last heartbeat {age_s:.0f} s ago")
        if stale:
            raise CommandError("stale scheduler heartbeat: " + "; ".join(stale))
        self.stdout.write(f"scheduler heartbeating: {', '.join(f'pid {s.pid}' for s in mine)}")
