"""`manage.py visage_scheduler`: RQ's scheduler as one supervised process of its own.

It moves due tasks (retries waiting out their backoff, delayed webhooks) from each queue's
scheduled registry onto the queue. RQ's `--with-scheduler` would fork it as a child of every
worker instead, and a SIGKILLed worker leaves that child orphaned, still holding the scheduler
lock. Run one (a second one waits as a standby: RQ's per-queue locks keep it idle).
"""

from __future__ import annotations

import django_rq
from django.conf import settings
from django.core.management.base import BaseCommand
from rq.scheduler import RQScheduler


class Command(BaseCommand):
    help = "Run RQ's scheduler for every Visage queue (one per deployment)."

    def handle(self, *args, **options):
        queues = [settings.MODERATION_QUEUE, *settings.GPU_QUEUES, settings.WEBHOOK_QUEUE]
        scheduler = RQScheduler(queues, connection=django_rq.get_connection(queues[0]))
        scheduler.acquire_locks()
        self.stdout.write(f"visage scheduler on {','.join(queues)} (locks held: {sorted(scheduler.acquired_locks) or 'none, standby'})")
        scheduler.work()
