"""Deleting an account (webapp/accounts/deletion.py), from the app (POST /api/v1/me/delete) and the
site (/account/delete/): every job and stored object of the person goes, unfinished jobs are
canceled with their holds released, every token stops at once, the ledger stays under a renamed,
inactive user, and the username is free again. Real database, Redis, S3 and worker."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from billing import selectors as billing_selectors
from billing.models import LedgerEntry
from tests.helpers.direct_uploads import start_upload
from tests.webapp.conftest import drain, post_job
from webapp.jobs.choices import JobState
from webapp.jobs.models import DirectUpload, Job
from webapp.media import storage
from webapp.notifications.models import PushDevice

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "alice-pass-123"  # tests/conftest.py's user_a


def stored_keys() -> list[str]:
    """Everything in both buckets (every test starts with them empty; the user is the only one)."""
    return [key for bucket in (settings.S3_UPLOADS_BUCKET, settings.S3_RESULTS_BUCKET) for key in storage.list_keys(bucket)]


def sign_in_device() -> str:
    response = APIClient().post(
        "/api/v1/auth/token",
        {"username": "alice", "password": PASSWORD, "device_name": "Ana's phone"},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()["access_token"]


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_the_app_deletes_the_account_and_everything_stored_for_it(api_a, funded_user, astronaut_pair):
    source, target, _ = astronaut_pair
    done = post_job(api_a, source, target)
    assert done.status_code == 201, done.content
    drain()
    waiting = post_job(api_a, source, target)  # screened and queued, never run: its credits are held
    drain([settings.MODERATION_QUEUE])
    assert Job.objects.get(id=waiting.json()["id"]).state == JobState.QUEUED
    pending = start_upload(api_a, source, kind="image", content_type="image/png")
    assert pending.status_code == 201, pending.content
    device = bearer(sign_in_device())
    assert device.post(
        "/api/v1/devices", {"platform": "fcm", "token": "fcm:" + "a" * 150, "app_id": "com.example.visage"},
        format="json",
    ).status_code == 201
    assert stored_keys()  # the result, its copies, the queued job's originals
    balance = billing_selectors.account_balance(user=funded_user)
    assert balance.held > 0
    entries = LedgerEntry.objects.filter(account__user=funded_user).count()

    wrong = device.post("/api/v1/me/delete", {"password": "not-it"}, format="json")
    assert wrong.status_code == 403 and wrong.json()["code"] == "password_incorrect"
    assert Job.objects.filter(owner=funded_user).count() == 2  # nothing deleted

    deleted = device.post("/api/v1/me/delete", {"password": PASSWORD}, format="json")
    assert deleted.status_code == 204, deleted.content

    assert not Job.objects.filter(owner=funded_user).exists()
    assert not DirectUpload.objects.filter(owner=funded_user).exists()
    assert not PushDevice.objects.filter(owner=funded_user).exists()
    assert stored_keys() == []
    # Every way in is closed at once: the API token, the device's access token, the password.
    assert api_a.get("/api/v1/me").status_code == 401
    assert device.get("/api/v1/me").status_code == 401
    assert APIClient().post(
        "/api/v1/auth/token", {"username": "alice", "password": PASSWORD}, format="json"
    ).status_code == 401
    # The ledger stays (the queued job's hold released, nothing charged for it), under a renamed user.
    user = get_user_model().objects.get(pk=funded_user.pk)
    assert user.username.startswith("deleted-") and user.email == "" and not user.is_active
    assert not user.has_usable_password()
    after = billing_selectors.account_balance(user=user)
    assert after.held == 0 and after.balance == balance.balance
    assert LedgerEntry.objects.filter(account__user=user).count() > entries  # the release was written
    # The name and the address are free for someone new.
    again = get_user_model().objects.create_user("alice", email="a@example.com", password="another-pass-456")
    assert again.pk != user.pk


def test_a_staff_account_is_closed_in_the_admin_not_by_itself(django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "root-pass-123")
    client = APIClient()
    client.force_authenticate(admin)
    response = client.post("/api/v1/me/delete", {"password": "root-pass-123"}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "staff_account"
    assert django_user_model.objects.get(pk=admin.pk).is_active


def test_the_password_is_asked_again_and_counts_against_the_sign_in_limits(api_a, settings):
    settings.LOGIN_MAX_FAILURES_PER_USERNAME = 2
    codes = [api_a.post("/api/v1/me/delete", {"password": f"guess-{n}"}, format="json") for n in range(3)]
    assert [c.status_code for c in codes] == [403, 429, 429]
    assert codes[-1].json()["code"] == "too_many_failed_logins" and codes[-1]["Retry-After"]
    assert api_a.post("/api/v1/me/delete", {}, format="json").status_code == 400


def test_the_account_page_deletes_the_account_and_signs_out(funded_user, api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    post_job(api_a, source, target)
    drain()
    browser = Client()
    browser.force_login(funded_user)
    assert b'href="/account/delete/"' in browser.get("/account/").content
    page = browser.get("/account/delete/")
    assert page.status_code == 200
    assert "your 1 swap, with its photos, videos and result" in page.content.decode()

    wrong = browser.post("/account/delete/", {"password": "not-it"})
    assert wrong.status_code == 200 and Job.objects.filter(owner=funded_user).exists()

    done = browser.post("/account/delete/", {"password": PASSWORD}, follow=True)
    assert done.redirect_chain[0] == ("/", 302)
    assert "Your account and everything stored for it were deleted." in done.content.decode()
    assert not done.wsgi_request.user.is_authenticated
    assert browser.get("/account/").status_code == 302  # signed out: to the sign-in page
    assert stored_keys() == [] and not Job.objects.filter(owner=funded_user).exists()
    assert billing_selectors.account_balance(user=funded_user).balance < Decimal("1000")  # the swap was paid for
