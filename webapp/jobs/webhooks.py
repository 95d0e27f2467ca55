"""Signed job webhooks (Standard Webhooks): the body is the job object; retried with backoff by RQ,
each try counted in its outbox row (models.WebhookDelivery), which the sweeper enqueues again.

Signature: `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per active secret
(VISAGE_WEBHOOK_SECRET, comma-separated `whsec_…`) so receivers can rotate. The `webhook-id` is
stable across retries of one event.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import logging
import secrets
import socket
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlparse

import urllib3
from django.conf import settings
from django.db.models import F
from django.utils import timezone
from standardwebhooks import Webhook

from webapp.env import webhook_secrets

from .dispatch import WEBHOOK_MAX_ATTEMPTS
from .models import Job, WebhookDelivery
from .payload import job_payload
from .webhook_urls import WebhookRefused, check_webhook_url_shape, is_public_address

logger = logging.getLogger(__name__)

__all__ = ["Destination", "WebhookRefused", "check_destination", "deliver", "post", "sign", "signing_secrets"]


def signing_secrets() -> list[str]:
    configured = webhook_secrets(settings.WEBHOOK_SECRET or "")
    if configured:
        return configured
    path = settings.DATA_DIR / "webhook_secret"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("whsec_" + base64.b64encode(secrets.token_bytes(24)).decode())  # Standard Webhooks: base64
        path.chmod(0o600)
    return [path.read_text().strip()]


def sign(*, message_id: str, timestamp: datetime, body: str) -> str:
    return " ".join(Webhook(secret).sign(message_id, timestamp, body) for secret in signing_secrets())


@dataclass(frozen=True)
class Destination:
    """Where a delivery connects: the address that was checked, not a second DNS answer."""

    scheme: str
    host: str
    port: int
    address: str
    target: str  # path and query


def check_destination(url: str) -> Destination:
    """Resolve the URL's host once and refuse non-public addresses (in production). The delivery
    then connects to exactly the address checked here, so DNS rebinding between the check and
    the connection cannot point it at an internal service."""
    check_webhook_url_shape(url)  # the same rule as at submit (webhook_urls.py)
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parsed.hostname, port, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise WebhookRefused(f"Webhook host {parsed.hostname} does not resolve: {exc}") from exc
    addresses = [info[4][0] for info in infos]
    if not settings.WEBHOOK_ALLOW_PRIVATE:
        for address in addresses:
            if not is_public_address(ipaddress.ip_address(address.split("%")[0])):
                raise WebhookRefused(f"Webhook host {parsed.hostname} resolves to a non-public address ({address})")
    target = (parsed.path or "/") + (f"?{parsed.query}" if parsed.query else "")
    return Destination(parsed.scheme, parsed.hostname, port, addresses[0], target)


def post(destination: Destination, body: bytes, headers: dict[str, str]) -> int:
    """POST to the checked address; TLS still verifies the certificate for the URL's host name."""
    timeout = urllib3.Timeout(connect=5, read=10)
    if destination.scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            destination.address, destination.port, timeout=timeout, retries=False,
            server_hostname=destination.host, assert_hostname=destination.host,
        )
    else:
        pool = urllib3.HTTPConnectionPool(destination.address, destination.port, timeout=timeout, retries=False)
    with pool:
        # The status decides the try: the receiver's body is never read (a huge or trickled one held
        # the webhooks worker, and a 200 whose body came short was counted as a failed try).
        response = pool.urlopen(
            "POST", destination.target, body=body, headers={**headers, "host": host_header(destination)},
            redirect=False, preload_content=False,
        )
        response.close()
        return response.status


def host_header(destination: Destination) -> str:
    """The Host of the URL (not the checked address): an IPv6 literal in brackets, the port unless it
    is the scheme's own."""
    name = f"[{destination.host}]" if ":" in destination.host else destination.host
    default_port = 443 if destination.scheme == "https" else 80
    return name if destination.port == default_port else f"{name}:{destination.port}"


def deliver(delivery_id: uuid.UUID) -> None:
    """One try of an outbox row (models.WebhookDelivery). A failed try raises, so RQ retries it with
    backoff, until the row's tries reach WEBHOOK_MAX_ATTEMPTS: then it is given up, logged."""
    pending = WebhookDelivery.objects.filter(id=delivery_id, delivered_at__isnull=True, abandoned_at__isnull=True)
    if not pending.filter(attempts__lt=WEBHOOK_MAX_ATTEMPTS).update(attempts=F("attempts") + 1):
        # Delivered or given up meanwhile (a duplicate task), its job deleted, or its tries spent by
        # workers that died mid-try (no exception, so _failed never gave it up): given up now.
        if pending.update(abandoned_at=timezone.now()):
            logger.warning("webhook %s given up: its %s tries are spent", delivery_id, WEBHOOK_MAX_ATTEMPTS)
        return
    delivery = WebhookDelivery.objects.select_related("job__source", "job__target").get(id=delivery_id)
    job = delivery.job
    try:
        status = _post_event(job, delivery.event)
    except Exception as exc:  # a refused or unreachable receiver: counted like any failed try
        _failed(delivery, f"{type(exc).__name__}: {exc}")
        raise
    if status >= 300:
        _failed(delivery, f"the receiver answered {status}")
        raise RuntimeError(f"webhook receiver answered {status} (try {delivery.attempts})")
    pending.update(delivered_at=timezone.now(), last_error="")


def _post_event(job: Job, event: str) -> int:
    destination = check_destination(job.webhook_url)
    body = json.dumps({"type": event, "data": job_payload(job)}, separators=(",", ":"))
    message_id = f"msg_{job.id.hex}_{event.removeprefix('job.')}"  # stable across retries of this event
    timestamp = datetime.now(tz=UTC)
    headers = {
        "content-type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": sign(message_id=message_id, timestamp=timestamp, body=body),
        "user-agent": "Visage-Webhooks/1",
    }
    return post(destination, body.encode(), headers)


def _failed(delivery: WebhookDelivery, error: str) -> None:
    fields = {"last_error": error[:2000]}
    if delivery.attempts >= WEBHOOK_MAX_ATTEMPTS:
        fields["abandoned_at"] = timezone.now()
        logger.warning("webhook %s of job %s given up after %s tries: %s", delivery.event, delivery.job_id,
                       delivery.attempts, error)
    WebhookDelivery.objects.filter(id=delivery.id, delivered_at__isnull=True).update(**fields)
