"""Signed job webhooks (Standard Webhooks): the body is the job object; retried with backoff by RQ.

Signature: `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per active secret
(VISAGE_WEBHOOK_SECRET, comma-separated `whsec_…`) so receivers can rotate. The `webhook-id` is
stable across retries of one event.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import secrets
import socket
import uuid
from datetime import UTC, datetime
from urllib.parse import urlparse

import requests
from django.conf import settings
from rq import get_current_job
from standardwebhooks import Webhook

from .models import Job
from .payload import job_payload


class WebhookRefused(Exception):
    """The URL points somewhere we never deliver to (private network in production)."""


def signing_secrets() -> list[str]:
    configured = [s.strip() for s in (settings.WEBHOOK_SECRET or "").split(",") if s.strip()]
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


def check_destination(url: str) -> None:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise WebhookRefused(f"Unsupported webhook URL {url!r}")
    if settings.WEBHOOK_ALLOW_PRIVATE:
        return
    for info in socket.getaddrinfo(parsed.hostname, parsed.port or 443, proto=socket.IPPROTO_TCP):
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global:
            raise WebhookRefused(f"Webhook host {parsed.hostname} resolves to a non-public address ({address})")


def deliver(job_id: uuid.UUID) -> None:
    job = Job.objects.select_related("source", "target").filter(id=job_id).first()
    if job is None or not job.webhook_url:
        return
    check_destination(job.webhook_url)
    body = json.dumps({"type": f"job.{job.state}", "data": job_payload(job)}, separators=(",", ":"))
    rq_job = get_current_job()
    message_id = f"msg_{job.id.hex}_{job.state}"  # stable across retries of this event
    timestamp = datetime.now(tz=UTC)
    headers = {
        "content-type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": sign(message_id=message_id, timestamp=timestamp, body=body),
        "user-agent": "Visage-Webhooks/1",
    }
    response = requests.post(job.webhook_url, data=body.encode(), headers=headers, timeout=10, allow_redirects=False)
    if response.status_code >= 300:
        attempt = (rq_job.retries_left if rq_job else None)
        raise RuntimeError(f"webhook receiver answered {response.status_code} (retries left: {attempt})")
