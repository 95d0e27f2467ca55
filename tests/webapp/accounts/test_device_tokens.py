"""Tokens for apps: a short-lived access token and a rotating refresh token bound to a named device;
reuse of a rotated refresh token signs the device out; expiry; signing out from the API and the
account page; long-lived API tokens keep working."""

from __future__ import annotations

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from webapp.accounts.models import DeviceToken, SignedInDevice

pytestmark = pytest.mark.django_db


def sign_in(device_name: str = "Ana's iPhone", **extra) -> dict:
    response = APIClient().post(
        "/api/v1/auth/token",
        {"username": "alice", "password": "alice-pass-123", "device_name": device_name, **extra},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def refresh(refresh_token: str):
    return APIClient().post("/api/v1/auth/refresh", {"refresh_token": refresh_token}, format="json")


def test_a_device_gets_an_access_and_a_refresh_token(user_a, settings):
    body = sign_in()
    assert body["token_type"] == "Bearer" and body["expires_in"] == settings.ACCESS_TOKEN_TTL_S
    assert body["device"]["name"] == "Ana's iPhone" and body["device"]["client"] == "mobile"
    assert bearer(body["access_token"]).get("/api/v1/me").json()["username"] == "alice"
    assert bearer(body["refresh_token"]).get("/api/v1/me").status_code == 401  # not a bearer token
    # Only hashes are stored.
    stored = set(DeviceToken.objects.values_list("key_sha256", flat=True))
    assert body["access_token"] not in stored and body["refresh_token"] not in stored


def test_refresh_rotates_both_tokens(user_a):
    first = sign_in()
    second = refresh(first["refresh_token"])
    assert second.status_code == 200, second.content
    second = second.json()
    assert (
        second["refresh_token"] != first["refresh_token"] and second["access_token"] != first["access_token"]
    )
    assert second["device"]["id"] == first["device"]["id"]
    assert bearer(second["access_token"]).get("/api/v1/me").status_code == 200
    # The access token the refresh replaced is over.
    assert bearer(first["access_token"]).get("/api/v1/me").status_code == 401
    third = refresh(second["refresh_token"])
    assert third.status_code == 200


def test_a_stolen_refresh_token_used_after_rotation_signs_the_device_out(user_a):
    first = sign_in()
    stolen = first["refresh_token"]
    rightful = refresh(first["refresh_token"]).json()  # the app rotates
    reused = refresh(stolen)  # the thief tries the old one
    assert reused.status_code == 401 and reused.json()["code"] == "refresh_token_reused"
    # The whole chain is over: the app's current access and refresh tokens too.
    assert bearer(rightful["access_token"]).get("/api/v1/me").status_code == 401
    after = refresh(rightful["refresh_token"])
    assert after.status_code == 401 and after.json()["code"] == "device_signed_out"
    device = SignedInDevice.objects.get(id=first["device"]["id"])
    assert device.signed_out_at is not None and device.signed_out_reason == "refresh_token_reused"


def test_reuse_signs_out_only_that_device(user_a):
    phone, tablet = sign_in("phone"), sign_in("tablet")
    refresh(phone["refresh_token"])
    assert refresh(phone["refresh_token"]).status_code == 401
    assert bearer(tablet["access_token"]).get("/api/v1/me").status_code == 200


def test_an_expired_access_token_is_refused_with_its_own_code(user_a):
    body = sign_in()
    DeviceToken.objects.filter(kind="access").update(
        expires_at=timezone.now() - timezone.timedelta(seconds=1)
    )
    response = bearer(body["access_token"]).get("/api/v1/me")
    assert response.status_code == 401 and response.json()["code"] == "access_token_expired"
    assert refresh(body["refresh_token"]).status_code == 200  # the app refreshes and goes on


def test_an_expired_refresh_token_is_refused(user_a):
    body = sign_in()
    DeviceToken.objects.filter(kind="refresh").update(
        expires_at=timezone.now() - timezone.timedelta(seconds=1)
    )
    response = refresh(body["refresh_token"])
    assert response.status_code == 401 and response.json()["code"] == "refresh_token_expired"
    assert refresh("vsr_not-a-token").json()["code"] == "invalid_refresh_token"


def test_devices_are_listed_and_signed_out_in_the_api(user_a, user_b):
    phone, tablet = sign_in("phone"), sign_in("tablet")
    listed = bearer(phone["access_token"]).get("/api/v1/auth/devices").json()
    assert {(d["name"], d["current"]) for d in listed} == {("phone", True), ("tablet", False)}
    # Another user's device is not found.
    other = APIClient()
    other.force_authenticate(user_b)
    assert other.delete(f"/api/v1/auth/devices/{tablet['device']['id']}").status_code == 404

    assert (
        bearer(phone["access_token"]).delete(f"/api/v1/auth/devices/{tablet['device']['id']}").status_code
        == 204
    )
    assert bearer(tablet["access_token"]).get("/api/v1/me").status_code == 401
    assert refresh(tablet["refresh_token"]).json()["code"] == "device_signed_out"
    assert [d["name"] for d in bearer(phone["access_token"]).get("/api/v1/auth/devices").json()] == ["phone"]
    # DELETE /auth/token with an access token signs its own device out.
    assert bearer(phone["access_token"]).delete("/api/v1/auth/token").status_code == 204
    assert bearer(phone["access_token"]).get("/api/v1/me").status_code == 401


def test_sign_out_from_the_account_page(client, user_a):
    body = sign_in("lost phone")
    client.force_login(user_a)
    page = client.get("/account/").content.decode()
    assert "lost phone" in page and f"/account/devices/{body['device']['id']}/sign-out" in page
    response = client.post(f"/account/devices/{body['device']['id']}/sign-out")
    assert response.status_code == 302
    assert bearer(body["access_token"]).get("/api/v1/me").status_code == 401
    assert f"/account/devices/{body['device']['id']}/sign-out" not in client.get("/account/").content.decode()


def test_long_lived_api_tokens_keep_working(user_a):
    response = APIClient().post(
        "/api/v1/auth/token", {"username": "alice", "password": "alice-pass-123"}, format="json"
    )
    assert response.status_code == 201 and response.json()["token"].startswith("vsg_")
    assert bearer(response.json()["token"]).get("/api/v1/me").status_code == 200
