"""Signed webhooks delivered to a real local receiver; results purged after the retention period."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from tests.helpers.webhook_receiver import Receiver
from tests.webapp.conftest import drain, post_job
from webapp.jobs import webhooks
from webapp.jobs.models import Job
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def test_succeeded_job_sends_one_signed_webhook(api_a, astronaut_pair, receiver, settings):
    settings.WEBHOOK_SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    source, target, _ = astronaut_pair
    job = post_job(api_a, source, target, webhook_url=receiver.url).json()
    drain()
    assert len(receiver.requests) == 1
    headers, body = receiver.requests[0]
    payload = Webhook(settings.WEBHOOK_SECRET).verify(body, headers)  # raises on a bad signature
    assert payload["type"] == "job.succeeded"
    assert payload["data"]["id"] == job["id"]
    assert payload["data"]["result"]["url"]
    with pytest.raises(WebhookVerificationError):
        Webhook("whsec_" + "A" * 32).verify(body, headers)


def test_webhook_signature_rotation_and_stable_id(settings):
    old, new = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_" + "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"
    settings.WEBHOOK_SECRET = f"{new},{old}"
    from datetime import UTC, datetime

    now = datetime.now(tz=UTC)
    signature = webhooks.sign(message_id="msg_1", timestamp=now, body="{}")
    assert len(signature.split(" ")) == 2
    headers = {"webhook-id": "msg_1", "webhook-timestamp": str(int(now.timestamp())), "webhook-signature": signature}
    assert Webhook(old).verify("{}", headers) == {}
    assert Webhook(new).verify("{}", headers) == {}


def test_private_destinations_refused_in_production(settings):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    for url in ("http://127.0.0.1:9/x", "http://10.0.0.8/x", "http://localhost/x", "ftp://example.com/x"):
        with pytest.raises(webhooks.WebhookRefused):
            webhooks.check_destination(url)


@pytest.mark.parametrize(
    ("resolved", "refused"),
    [
        ("64:ff9b::a9fe:a9fe", True),  # NAT64 to 169.254.169.254
        ("2002:a9fe:a9fe::1", True),  # 6to4
        ("::ffff:10.0.0.8", True),  # IPv4-mapped
        ("2001:0:4136:e378:8000:63bf:5601:5601", True),  # Teredo, client 169.254.169.254
        ("64:ff9b::808:808", False),  # NAT64 to a public address is fine
        ("2606:4700:4700::1111", False),
    ],
)
def test_delivery_refuses_names_that_resolve_to_gateway_forms_of_private_addresses(
    settings, monkeypatch, resolved, refused
):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    monkeypatch.setattr(
        webhooks.socket, "getaddrinfo", lambda host, port, **kw: [(10, 1, 6, "", (resolved, port, 0, 0))]
    )
    if refused:
        with pytest.raises(webhooks.WebhookRefused, match="non-public"):
            webhooks.check_destination("https://hooks.example.com/x")
    else:
        assert webhooks.check_destination("https://hooks.example.com/x").address == resolved


def test_failed_delivery_is_retried_with_the_same_id(api_a, astronaut_pair, settings):
    receiver = Receiver(fail_first=1)
    try:
        source, target, _ = astronaut_pair
        post_job(api_a, source, target, webhook_url=receiver.url)
        drain()
        assert len(receiver.requests) == 1  # the first attempt failed; a retry is scheduled with backoff
        import django_rq

        queue = django_rq.get_queue(settings.WEBHOOK_QUEUE)
        scheduled = queue.scheduled_job_registry.get_job_ids()
        assert len(scheduled) == 1
        queue.enqueue_job(queue.fetch_job(scheduled[0]))  # don't wait for the backoff
        queue.scheduled_job_registry.remove(scheduled[0])
        drain([settings.WEBHOOK_QUEUE])
        assert len(receiver.requests) == 2
        assert receiver.requests[0][0]["webhook-id"] == receiver.requests[1][0]["webhook-id"]
    finally:
        receiver.close()


def test_results_past_retention_are_purged(api_a, astronaut_pair, settings):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain()
    job = Job.objects.get(id=job_id)
    assert storage.exists(settings.S3_RESULTS_BUCKET, job.result_key)
    call_command("visage_purge_results")
    assert storage.exists(settings.S3_RESULTS_BUCKET, job.result_key)  # still within retention
    Job.objects.filter(id=job_id).update(completed_at=timezone.now() - timedelta(days=settings.RESULT_RETENTION_DAYS + 1))
    call_command("visage_purge_results")
    assert not storage.exists(settings.S3_RESULTS_BUCKET, job.result_key)
    assert not storage.exists(settings.S3_RESULTS_BUCKET, job.before_key)
    body = api_a.get(f"/api/v1/jobs/{job_id}").json()
    assert body["media_deleted"] is True and body["result_url"] is None


def test_delivery_connects_to_the_address_that_was_checked(api_a, astronaut_pair, settings, monkeypatch):
    """DNS rebinding: the host resolves once, is checked, and that address is used for the connection
    (with the URL's host name in the Host header), whatever a second lookup would say."""
    import socket

    receiver = Receiver()
    real_getaddrinfo = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding_dns(host, *args, **kwargs):
        if host == "hooks.example.test":
            lookups.append(host)
            address = "127.0.0.1" if len(lookups) == 1 else "10.66.66.66"  # a second answer would be internal
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, args[0] if args else 80))]
        return real_getaddrinfo(host, *args, **kwargs)

    try:
        monkeypatch.setattr(socket, "getaddrinfo", rebinding_dns)
        source, target, _ = astronaut_pair
        port = receiver.server.server_address[1]
        post_job(api_a, source, target, webhook_url=f"http://hooks.example.test:{port}/hook?x=1")
        drain()
        assert len(receiver.requests) == 1
        assert lookups == ["hooks.example.test"]  # resolved once, by the check
        assert receiver.requests[0][0]["host"] == f"hooks.example.test:{port}"
    finally:
        receiver.close()
