"""A job's end pushes to each of its owner's devices exactly once, through the outbox the webhooks
use, to stand-in FCM and APNs servers that verify every request. Dead tokens are removed; a retry
after a 5xx delivers without a duplicate; a lost enqueue is recovered by the sweeper."""

from __future__ import annotations

from datetime import timedelta

import django_rq
import pytest
from django.db import transaction
from django.utils import timezone

from tests.webapp.conftest import drain, post_job
from webapp.jobs.models import Job, PushDelivery
from webapp.jobs.services import push_outbox
from webapp.notifications.models import PushDevice

pytestmark = pytest.mark.django_db(transaction=True)

FCM_A, FCM_A2, FCM_DEAD = "fcm-a:" + "a" * 150, "fcm-a2:" + "b" * 150, "fcm-dead:" + "c" * 150
APNS_A, APNS_DEAD = "ab" * 32, "cd" * 32


def register(client, platform: str, token: str, app_id: str = "com.example.visage") -> int:
    response = client.post("/api/v1/devices", {"platform": platform, "token": token, "app_id": app_id}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def cancel_new_job(client, astronaut_pair) -> str:
    """A job that ends at once (canceled) without the engine: its push is owed like any end's."""
    source, target, _ = astronaut_pair
    job_id = post_job(client, source, target).json()["id"]
    assert client.post(f"/api/v1/jobs/{job_id}/cancel").status_code == 200
    return job_id


def run_scheduled_retries(queue_name: str) -> int:
    """Move the retries waiting out their backoff onto the queue (don't wait for it), then drain it."""
    queue = django_rq.get_queue(queue_name)
    scheduled = queue.scheduled_job_registry.get_job_ids()
    for task_id in scheduled:
        queue.enqueue_job(queue.fetch_job(task_id))
        queue.scheduled_job_registry.remove(task_id)
    drain([queue_name])
    return len(scheduled)


def test_a_finished_job_pushes_once_to_each_device_and_dead_tokens_are_removed(
    api_a, api_b, astronaut_pair, fcm_standin, apns_standin, settings
):
    fcm_standin.dead_tokens.add(FCM_DEAD)
    apns_standin.dead_tokens.add(APNS_DEAD)
    for platform, token in [("fcm", FCM_A), ("fcm", FCM_A2), ("fcm", FCM_DEAD), ("apns", APNS_A), ("apns", APNS_DEAD)]:
        register(api_a, platform, token, app_id=apns_standin.topic)
    register(api_b, "fcm", "fcm-b:" + "d" * 150)  # another user's phone: not told about alice's jobs

    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain()  # screening, the GPU run, then the pushes
    assert Job.objects.get(id=job_id).state == "succeeded"

    assert fcm_standin.problems == [] and apns_standin.problems == []
    for token in (FCM_A, FCM_A2):
        [message] = fcm_standin.delivered_to(token)
        assert message["data"] == {"job_id": job_id, "state": "succeeded"}
        assert message["notification"] == {"title": "Your swap is ready", "body": "Open the app to see it."}
        assert "image" not in message["notification"]
    [payload] = apns_standin.delivered_to(APNS_A)
    assert payload["job_id"] == job_id and payload["state"] == "succeeded"
    assert payload["aps"]["alert"] == {"title": "Your swap is ready", "body": "Open the app to see it."}
    assert len(fcm_standin.delivered) == 2 and len(apns_standin.delivered) == 1  # nothing to bob's phone
    # The tokens the providers called dead were tried once and their devices removed.
    assert sum(m["token"] == FCM_DEAD for m in fcm_standin.sends) == 1
    assert sum(h[":path"].endswith(APNS_DEAD) for h, _ in apns_standin.requests) == 1
    assert set(PushDevice.objects.filter(owner__username="alice").values_list("token", flat=True)) == {
        FCM_A, FCM_A2, APNS_A
    }
    assert PushDelivery.objects.filter(job_id=job_id, delivered_at__isnull=False).count() == 3
    assert run_scheduled_retries(settings.WEBHOOK_QUEUE) == 0  # nothing left to retry

    # The next job's end: one more push each, none for the removed devices.
    second = cancel_new_job(api_a, astronaut_pair)
    drain([settings.WEBHOOK_QUEUE])
    assert [m["data"] for m in fcm_standin.delivered_to(FCM_A)][1:] == [{"job_id": second, "state": "canceled"}]
    assert len(fcm_standin.delivered_to(FCM_A2)) == 2 and len(apns_standin.delivered_to(APNS_A)) == 2
    assert sum(m["token"] == FCM_DEAD for m in fcm_standin.sends) == 1
    assert sum(h[":path"].endswith(APNS_DEAD) for h, _ in apns_standin.requests) == 1


def test_a_retry_after_a_5xx_delivers_without_a_duplicate(api_a, astronaut_pair, fcm_standin, apns_standin, settings):
    register(api_a, "fcm", FCM_A)
    register(api_a, "apns", APNS_A, app_id=apns_standin.topic)
    fcm_standin.fail_next = apns_standin.fail_next = 1
    job_id = cancel_new_job(api_a, astronaut_pair)
    drain([settings.WEBHOOK_QUEUE])
    assert fcm_standin.delivered == [] and apns_standin.delivered == []  # both answered 503
    assert list(PushDelivery.objects.values_list("attempts", "delivered_at")) == [(1, None), (1, None)]
    assert all("503" in error for error in PushDelivery.objects.values_list("last_error", flat=True))

    assert run_scheduled_retries(settings.WEBHOOK_QUEUE) == 2
    assert len(fcm_standin.delivered_to(FCM_A)) == 1 and len(apns_standin.delivered_to(APNS_A)) == 1
    assert PushDelivery.objects.filter(attempts=2, delivered_at__isnull=False).count() == 2
    # The sweeper finds nothing owed, and nothing is left scheduled: no second copy is ever sent.
    assert push_outbox.pushes_sweep_undelivered(now=timezone.now() + timedelta(hours=1)) == 0
    assert run_scheduled_retries(settings.WEBHOOK_QUEUE) == 0
    assert len(fcm_standin.sends) == 2 and len(apns_standin.requests) == 2
    assert apns_standin.delivered[0][2]["job_id"] == job_id
    assert fcm_standin.problems == [] and apns_standin.problems == []


def test_pushes_whose_enqueue_was_lost_are_sent_by_the_sweeper_once(api_a, astronaut_pair, fcm_standin, settings):
    register(api_a, "fcm", FCM_A)
    job_id = cancel_new_job(api_a, astronaut_pair)
    django_rq.get_connection(settings.WEBHOOK_QUEUE).flushdb()  # Redis lost the task (or was down at commit)
    drain([settings.WEBHOOK_QUEUE])
    assert fcm_standin.delivered == []

    later = timezone.now() + timedelta(seconds=settings.ENQUEUE_GRACE_S + 1)
    assert push_outbox.pushes_sweep_undelivered(now=later) == 1
    assert push_outbox.pushes_sweep_undelivered(now=later) == 0  # already queued: not twice
    drain([settings.WEBHOOK_QUEUE])
    assert [m["data"] for m in fcm_standin.delivered] == [{"job_id": job_id, "state": "canceled"}]
    assert push_outbox.pushes_sweep_undelivered(now=later) == 0


def test_owing_again_for_the_same_job_adds_no_push(api_a, astronaut_pair, fcm_standin, settings):
    """The (job, device) pair is the idempotency key: a second owe for the same end is a no-op."""
    register(api_a, "fcm", FCM_A)
    job_id = cancel_new_job(api_a, astronaut_pair)
    with transaction.atomic():
        push_outbox.pushes_owe(job_id, state="canceled")
    drain([settings.WEBHOOK_QUEUE])
    assert PushDelivery.objects.count() == 1
    assert len(fcm_standin.delivered) == 1


def test_no_push_is_owed_while_push_is_off(api_a, astronaut_pair, settings):
    register(api_a, "fcm", FCM_A)  # registering works before the operator turns push on
    cancel_new_job(api_a, astronaut_pair)
    assert PushDelivery.objects.count() == 0


def test_a_device_removed_by_its_user_gets_no_owed_push(api_a, astronaut_pair, fcm_standin, settings):
    device_id = register(api_a, "fcm", FCM_A)
    cancel_new_job(api_a, astronaut_pair)
    assert api_a.delete(f"/api/v1/devices/{device_id}").status_code == 204
    drain([settings.WEBHOOK_QUEUE])
    assert fcm_standin.sends == []


def test_a_phone_that_changed_hands_gets_no_push_about_the_previous_users_job(
    api_a, api_b, astronaut_pair, fcm_standin, settings
):
    register(api_a, "fcm", FCM_A)
    cancel_new_job(api_a, astronaut_pair)  # alice's push is owed, not yet sent
    register(api_b, "fcm", FCM_A)  # bob signs in on that phone before the worker sends it
    drain([settings.WEBHOOK_QUEUE])
    assert fcm_standin.sends == []
    assert PushDelivery.objects.count() == 0


# --- found by trying it as an attacker ---------------------------------------------------------------


def test_a_password_change_stops_pushes_to_the_phones_it_signed_out(
    api_a, funded_user, astronaut_pair, fcm_standin, settings
):
    """Someone who had alice's password signs in on a phone and registers its push token; alice
    changes her password: the phone is signed out and is told of none of her jobs any more."""
    from rest_framework.test import APIClient

    from webapp.accounts import devices as account_devices

    phone = account_devices.device_sign_in(user=funded_user, device_name="intruder's phone")
    intruder = APIClient()
    intruder.credentials(HTTP_AUTHORIZATION=f"Bearer {phone.access_token}")
    register(intruder, "fcm", FCM_A2)

    funded_user.set_password("a brand new password 123!")
    funded_user.save()
    assert intruder.get("/api/v1/devices").status_code == 401
    assert not PushDevice.objects.filter(owner=funded_user).exists()

    cancel_new_job(api_a, astronaut_pair)
    drain([settings.WEBHOOK_QUEUE])
    assert fcm_standin.delivered_to(FCM_A2) == []


@pytest.mark.parametrize("token", ["a", "abc", "0f" * 32 + "a"])
def test_an_apns_token_that_is_not_whole_bytes_is_refused(api_a, apns_standin, token):
    """An APNs device token is bytes sent as hex: an odd number of digits is no token at all (it was
    stored, pushed to, and dropped only on Apple's BadDeviceToken)."""
    response = api_a.post(
        "/api/v1/devices", {"platform": "apns", "token": token, "app_id": apns_standin.topic}, format="json"
    )
    assert response.status_code == 400 and response["Content-Type"].startswith("application/problem+json")
    assert not PushDevice.objects.exists()


def test_a_404_that_does_not_say_unregistered_keeps_the_device(api_a, astronaut_pair, fcm_standin, settings):
    """FCM says a token is dead with errorCode UNREGISTERED. Another 404 (a wrong FCM_URL or project, a
    proxy's page) says nothing of the token: it was deleted at its first push, every user's alike."""
    register(api_a, "fcm", FCM_A)
    settings.FCM_URL = fcm_standin.url + "/gateway"  # the stand-in answers 404 NOT_FOUND on any other path
    cancel_new_job(api_a, astronaut_pair)
    drain([settings.WEBHOOK_QUEUE])
    assert fcm_standin.delivered == []
    assert PushDevice.objects.filter(token=FCM_A).exists()
    assert PushDelivery.objects.filter(delivered_at__isnull=True, abandoned_at__isnull=True).count() == 1
