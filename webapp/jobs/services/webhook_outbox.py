"""The webhook outbox: a job's final state owes its owner's endpoint one webhook, recorded as a
row in the same transaction as the state change, enqueued after the commit, and enqueued again by
the sweeper while it is neither delivered nor given up (a Redis outage only delays it)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .. import dispatch
from ..models import Job, WebhookDelivery


def webhook_owe(job_id: uuid.UUID, *, state: str) -> None:
    """Call inside the transaction that moved the job to `state`: nothing when it has no webhook."""
    if not Job.objects.filter(id=job_id).exclude(webhook_url="").exists():
        return
    delivery, created = WebhookDelivery.objects.get_or_create(job_id=job_id, event=f"job.{state}")
    if created:
        transaction.on_commit(lambda: dispatch.enqueue_webhook(delivery.id), robust=True)


def webhooks_sweep_undelivered(*, now: datetime | None = None) -> int:
    """Enqueue again every owed webhook that no RQ task will try (its enqueue hit a Redis outage,
    or Redis lost it). Its tries stay counted in the row, so this never adds tries beyond
    WEBHOOK_MAX_ATTEMPTS."""
    now = now or timezone.now()
    grace = now - timedelta(seconds=settings.ENQUEUE_GRACE_S)
    owed = WebhookDelivery.objects.filter(
        delivered_at__isnull=True, abandoned_at__isnull=True, created_at__lt=grace
    )
    enqueued = 0
    for delivery_id in owed.values_list("id", flat=True):
        if not dispatch.webhook_pending(delivery_id):
            dispatch.enqueue_webhook(delivery_id)
            enqueued += 1
    return enqueued
