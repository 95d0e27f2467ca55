"""Job pushes to the owner's phones: one try of a push outbox row (models.PushDelivery), retried by
RQ with backoff like a webhook (dispatch.PUSH_RETRY), each try counted in the row.

At least once: a worker that dies between the provider's 200 and the row's update sends the push
again on the retry; the job id as collapse key (FCM `collapse_key` and `tag`, APNs
`apns-collapse-id`) makes the phone replace the first copy rather than show two.
"""

from __future__ import annotations

import logging
import uuid

from django.db.models import F
from django.utils import timezone

from webapp.notifications.errors import PushTokenInvalid
from webapp.notifications.push import enabled_platforms, job_push_send
from webapp.notifications.push_devices import push_device_remove_invalid

from .dispatch import PUSH_MAX_ATTEMPTS
from .models import PushDelivery

logger = logging.getLogger(__name__)


def deliver(delivery_id: uuid.UUID) -> None:
    """A failed try raises, so RQ retries it with backoff, until the row's tries reach
    PUSH_MAX_ATTEMPTS: then it is given up, logged. A token the provider calls dead deletes the
    device (and this row with it): nothing more is sent to it."""
    pending = PushDelivery.objects.filter(id=delivery_id, delivered_at__isnull=True, abandoned_at__isnull=True)
    if not pending.filter(attempts__lt=PUSH_MAX_ATTEMPTS).update(attempts=F("attempts") + 1):
        # Delivered or given up meanwhile (a duplicate task), its job or device deleted, or its tries
        # spent by workers that died mid-try (no exception, so _failed never gave it up): given up now.
        if pending.update(abandoned_at=timezone.now()):
            logger.warning("push %s given up: its %s tries are spent", delivery_id, PUSH_MAX_ATTEMPTS)
        return
    delivery = PushDelivery.objects.select_related("device").get(id=delivery_id)
    if delivery.device.platform not in enabled_platforms():  # its credentials were removed since
        pending.update(abandoned_at=timezone.now(), last_error=f"{delivery.device.platform} push is off")
        return
    try:
        job_push_send(delivery.device, job_id=delivery.job_id, state=delivery.state, push_id=delivery.id)
    except PushTokenInvalid as exc:
        push_device_remove_invalid(device_id=delivery.device_id, reason=str(exc))
        return
    except Exception as exc:  # errors.PushFailed, or anything unexpected: counted like any failed try
        _failed(delivery, f"{type(exc).__name__}: {exc}")
        raise
    pending.update(delivered_at=timezone.now(), last_error="")


def _failed(delivery: PushDelivery, error: str) -> None:
    fields = {"last_error": error[:2000]}
    if delivery.attempts >= PUSH_MAX_ATTEMPTS:
        fields["abandoned_at"] = timezone.now()
        logger.warning("push of job %s to device %s given up after %s tries: %s", delivery.job_id,
                       delivery.device_id, delivery.attempts, error)
    PushDelivery.objects.filter(id=delivery.id, delivered_at__isnull=True).update(**fields)
