"""The push outbox: a job's final state owes each of its owner's push devices one push, recorded as
rows (models.PushDelivery) in the same transaction as the state change, enqueued after the commit,
and enqueued again by the sweeper while undelivered: the webhook outbox's rule, per device."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from webapp.notifications.models import PushDevice
from webapp.notifications.push import enabled_platforms

from .. import dispatch
from ..models import Job, PushDelivery


def pushes_owe(job_id: uuid.UUID, *, state: str) -> None:
    """Call inside the transaction that moved the job to its final `state`: nothing when push is
    off or its owner has no device on a platform this server pushes to."""
    platforms = enabled_platforms()
    if not platforms:
        return
    owner_id = Job.objects.filter(id=job_id).values_list("owner_id", flat=True).first()
    devices = PushDevice.objects.filter(owner_id=owner_id, platform__in=platforms).values_list("id", flat=True)
    for device_id in devices:
        delivery, created = PushDelivery.objects.get_or_create(
            job_id=job_id, device_id=device_id, defaults={"state": state}
        )
        if created:
            transaction.on_commit(lambda d=delivery.id: dispatch.enqueue_push(d), robust=True)


def pushes_sweep_undelivered(*, now: datetime | None = None) -> int:
    """Enqueue again every owed push that no RQ task will try (its enqueue hit a Redis outage, or
    Redis lost it). Its tries stay counted in the row, so never more than PUSH_MAX_ATTEMPTS."""
    now = now or timezone.now()
    grace = now - timedelta(seconds=settings.ENQUEUE_GRACE_S)
    owed = PushDelivery.objects.filter(delivered_at__isnull=True, abandoned_at__isnull=True, created_at__lt=grace)
    enqueued = 0
    for delivery_id in owed.values_list("id", flat=True):
        if not dispatch.push_pending(delivery_id):
            dispatch.enqueue_push(delivery_id)
            enqueued += 1
    return enqueued
