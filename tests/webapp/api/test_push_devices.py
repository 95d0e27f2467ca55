"""/api/v1/devices: registering, listing and removing push tokens; bad input is a problem+json 400.
Apart from /api/v1/auth/devices (signed-in sessions)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.helpers.problems import assert_problem
from webapp.notifications import push_devices
from webapp.notifications.models import PushDevice

pytestmark = pytest.mark.django_db

FCM_TOKEN = "dGVzdA:APA91bH" + "k" * 140
APNS_TOKEN = "0f" * 32


def register(client, **fields):
    body = {"platform": "fcm", "token": FCM_TOKEN, "app_id": "com.example.visage", **fields}
    return client.post("/api/v1/devices", body, format="json")


def test_register_list_and_remove(api_a, fcm_standin):
    response = register(api_a, name="Ana's Pixel", locale="pt-BR")
    assert response.status_code == 201, response.content
    device = response.json()
    assert response["Location"] == f"/api/v1/devices/{device['id']}"
    assert device["platform"] == "fcm" and device["name"] == "Ana's Pixel" and device["locale"] == "pt-BR"
    assert device["push_enabled"] is True  # FCM is configured (the stand-in)
    assert "token" not in device
    apns = register(api_a, platform="apns", token=APNS_TOKEN.upper(), app_id="com.example.visage").json()
    assert apns["push_enabled"] is False  # APNs is not configured here
    assert PushDevice.objects.get(id=apns["id"]).token == APNS_TOKEN  # hex kept in one case

    listed = api_a.get("/api/v1/devices").json()
    assert sorted(d["id"] for d in listed) == sorted([device["id"], apns["id"]])
    assert api_a.get("/api/v1/auth/devices").json() == []  # signed-in sessions are another list

    assert api_a.delete(f"/api/v1/devices/{device['id']}").status_code == 204
    assert [d["id"] for d in api_a.get("/api/v1/devices").json()] == [apns["id"]]
    assert_problem(api_a.delete(f"/api/v1/devices/{device['id']}"), 404, "not_found")


def test_registering_the_same_token_again_updates_it(api_a):
    first = register(api_a, name="Pixel", locale="en").json()
    again = register(api_a, name="Ana's Pixel", locale="de")
    assert again.status_code == 200
    assert again.json()["id"] == first["id"]
    assert (again.json()["name"], again.json()["locale"]) == ("Ana's Pixel", "de")
    assert PushDevice.objects.count() == 1


def test_a_token_registered_by_another_user_moves_to_them(api_a, api_b, user_b):
    """The phone's new user gets its pushes as a new device; the previous one's jobs no longer reach it."""
    mine = register(api_a).json()
    theirs = register(api_b)
    assert theirs.status_code == 201 and theirs.json()["id"] != mine["id"]
    assert PushDevice.objects.get().owner == user_b
    assert api_a.get("/api/v1/devices").json() == []
    assert_problem(api_a.delete(f"/api/v1/devices/{mine['id']}"), 404, "not_found")


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"platform": "gcm"}, "platform"),
        ({"token": ""}, "token"),
        ({"token": "x" * 1025}, "token"),
        ({"token": "has spaces in it"}, "token"),
        ({"platform": "apns", "token": "not-hex"}, "token"),
        ({"app_id": ""}, "app_id"),
        ({"app_id": "com.example/../x"}, "app_id"),
        ({"locale": "English please"}, "locale"),
        ({"name": "n" * 101}, "name"),
        ({"name": 0}, "name"),  # a number is not a string (schemathesis ST201)
        ({"app_id": 7}, "app_id"),
    ],
)
def test_bad_input_is_a_problem_with_field_errors(api_a, fields, field):
    assert_problem(register(api_a, **fields), 400, "validation_error", field)
    assert PushDevice.objects.count() == 0


def test_apns_tokens_of_an_app_this_server_does_not_serve_are_refused(api_a, apns_standin):
    body = assert_problem(
        register(api_a, platform="apns", token=APNS_TOKEN, app_id="com.other.app"), 400, "validation_error", "app_id"
    )
    assert apns_standin.topic in body["detail"]
    assert register(api_a, platform="apns", token=APNS_TOKEN, app_id=apns_standin.topic).status_code == 201


def test_signed_out_callers_cannot_register(db):
    assert_problem(APIClient().post("/api/v1/devices", {}, format="json"), 401, "not_authenticated")


def test_the_oldest_registrations_beyond_the_limit_go(api_a):
    from webapp.notifications.push_devices import MAX_PUSH_DEVICES_PER_USER

    ids = [register(api_a, token=f"token-{n}").json()["id"] for n in range(MAX_PUSH_DEVICES_PER_USER + 2)]
    kept = {d["id"] for d in api_a.get("/api/v1/devices").json()}
    assert kept == set(ids[2:])


def test_push_devices_are_in_the_admin(api_a, admin_client):
    device = register(api_a, name="Ana's Pixel").json()
    page = admin_client.get("/admin/webapp/pushdevice/")
    assert page.status_code == 200
    assert "Ana&#x27;s Pixel" in page.content.decode()
    assert admin_client.get(f"/admin/webapp/pushdevice/{device['id']}/change/").status_code == 200


def test_two_users_registering_one_token_at_once_is_no_500(user_a, user_b, monkeypatch):
    """Both signed in on one phone at the same moment: the other's row was committed between this
    request's delete and insert, and the unique token answered a 500. The last to register has it."""
    real = PushDevice.objects.update_or_create
    raced = []

    def other_user_commits_first(**kwargs):
        if not raced:
            raced.append(True)
            PushDevice.objects.create(platform=kwargs["platform"], token=kwargs["token"], owner=user_b, app_id="app")
        return real(**kwargs)

    monkeypatch.setattr(PushDevice.objects, "update_or_create", other_user_commits_first)
    device, created = push_devices.push_device_register(user=user_a, platform="fcm", token="t" * 64, app_id="app")
    assert created and list(PushDevice.objects.values_list("owner", flat=True)) == [user_a.pk]
