"""Real answers of every /api/v1 operation, successes and documented errors, against the generated
OpenAPI document: typed, closed (additionalProperties: false), nullable where it says so."""

from __future__ import annotations

import json

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from tests.helpers import sse
from tests.helpers.direct_uploads import send_parts, start_upload
from tests.helpers.images import encode
from tests.helpers.openapi import assert_conforms, generated_schema
from tests.webapp.conftest import api_client_for, drain, post_job

pytestmark = pytest.mark.django_db(transaction=True)


def api_operations() -> set[str]:
    return {
        operation["operationId"]
        for path, operations in generated_schema()["paths"].items()
        if path.startswith("/api/v1/")
        for operation in operations.values()
        if isinstance(operation, dict) and "operationId" in operation
    }


def test_every_operation_answers_what_its_schema_says(
    api_a, funded_user, astronaut_pair, astronaut_rgb, settings
):
    settings.SHARE_LINKS_ENABLED = True
    settings.EVENTS_STREAM_MAX_S = 2.0
    source, target, _ = astronaut_pair
    seen: set[str] = set()

    def check(response, method, **kwargs):
        seen.add(assert_conforms(response, method=method, **kwargs))
        return response

    created = check(post_job(api_a, source, target, headers={"Idempotency-Key": "k1"}), "POST")
    assert created.status_code == 201, created.content
    job_id = created.json()["id"]
    replayed = check(post_job(api_a, source, target, headers={"Idempotency-Key": "k1"}), "POST")
    assert replayed["Idempotent-Replayed"] == "true"
    drain([django_settings.MODERATION_QUEUE])  # screened, waiting for a GPU worker
    queued = check(api_a.get(f"/api/v1/jobs/{job_id}"), "GET").json()
    assert queued["state"] == "queued" and queued["queue"]["position"] == 1
    check(api_a.get("/api/v1/jobs"), "GET")
    drain()
    job = check(api_a.get(f"/api/v1/jobs/{job_id}"), "GET")
    body = job.json()
    assert body["state"] == "succeeded" and body["result"]["url"] and body["cost"]["state"] == "paid", body
    assert body["engine"] and body["provenance"] is not None and body["consent"] and body["quote"]
    not_modified = check(api_a.get(f"/api/v1/jobs/{job_id}", HTTP_IF_NONE_MATCH=job["ETag"]), "GET")
    assert not_modified.status_code == 304
    check(api_a.get(f"/api/v1/jobs/{job_id}?wait=0.1&until=final"), "GET")
    check(api_a.patch(f"/api/v1/jobs/{job_id}", {"favourite": True}, format="json"), "PATCH")
    assert check(api_a.post(f"/api/v1/jobs/{job_id}/share"), "POST").status_code == 201
    assert check(api_a.post(f"/api/v1/jobs/{job_id}/share"), "POST").status_code == 200
    shared = check(api_a.get("/api/v1/jobs?favourite=true"), "GET").json()
    assert shared["results"][0]["share"]["views"] == 0
    assert check(api_a.delete(f"/api/v1/jobs/{job_id}/share"), "DELETE").status_code == 204

    events = api_a.get("/api/v1/jobs/events", HTTP_LAST_EVENT_ID="0-0")
    check(events, "GET")  # the stream's media type is documented
    for event in sse.job_events(events, 3):
        check(events, "GET", body=event["data"])
    events.close()

    second = post_job(api_a, source, target).json()
    canceled = check(api_a.post(f"/api/v1/jobs/{second['id']}/cancel"), "POST").json()
    assert canceled["state"] == "canceled" and canceled["cost"]["state"] == "released"
    assert check(api_a.delete(f"/api/v1/jobs/{second['id']}"), "DELETE").status_code == 204

    png = encode(astronaut_rgb)
    faces = check(
        api_a.post("/api/v1/faces", {"image": SimpleUploadedFile("a.png", png)}, format="multipart"), "POST"
    )
    assert faces.json()["faces"]
    quote = {"width": 640, "height": 480, "mode": "standard", "resolution": "720p"}
    check(api_a.post("/api/v1/quotes", quote, format="json"), "POST")
    check(api_a.post("/api/v1/quotes", {**quote, "target": SimpleUploadedFile("t.jpg", target)}), "POST")
    check(api_a.get("/api/v1/me"), "GET")
    check(api_a.get("/api/v1/ledger"), "GET")
    check(api_a.get("/api/v1/ledger/export.csv"), "GET")
    check(api_a.get("/api/v1/billing/packs"), "GET")
    token = check(
        APIClient().post(
            "/api/v1/auth/token", {"username": "alice", "password": "alice-pass-123"}, format="json"
        ),
        "POST",
    )
    fresh = APIClient()
    fresh.credentials(HTTP_AUTHORIZATION=f"Bearer {token.json()['token']}")
    assert check(fresh.delete("/api/v1/auth/token"), "DELETE").status_code == 204

    # A direct upload of a real photo: parts PUT straight to S3, then complete and retrieve.
    created_upload = check(start_upload(api_a, png, kind="image", content_type="image/png"), "POST")
    assert created_upload.status_code == 201, created_upload.content
    upload = created_upload.json()
    assert upload["state"] == "pending" and upload["parts"]
    early = check(api_a.post(f"/api/v1/uploads/{upload['id']}/complete"), "POST")
    assert early.status_code == 409 and early.json()["code"] == "upload_incomplete", early.content
    send_parts(upload, png, [part["part_number"] for part in upload["parts"]])
    resumed = check(api_a.get(f"/api/v1/uploads/{upload['id']}"), "GET").json()
    assert [p["part_number"] for p in resumed["parts_received"]] == [
        p["part_number"] for p in upload["parts"]
    ]
    completed = check(api_a.post(f"/api/v1/uploads/{upload['id']}/complete"), "POST")
    assert completed.status_code == 200 and completed.json()["state"] == "ready", completed.content
    assert check(api_a.get(f"/api/v1/uploads/{upload['id']}"), "GET").json()["parts"] == []

    # A device signs in, refreshes once, lists the devices, is signed out; a reused refresh is refused.
    credentials = {"username": "alice", "password": "alice-pass-123", "device_name": "Contract phone"}
    pair = check(APIClient().post("/api/v1/auth/token", credentials, format="json"), "POST").json()
    refreshed = check(
        APIClient().post("/api/v1/auth/refresh", {"refresh_token": pair["refresh_token"]}, format="json"),
        "POST",
    )
    assert refreshed.status_code == 200, refreshed.content
    device = APIClient()
    device.credentials(HTTP_AUTHORIZATION=f"Bearer {refreshed.json()['access_token']}")
    listed = check(device.get("/api/v1/auth/devices"), "GET").json()
    assert [d["current"] for d in listed if d["id"] == pair["device"]["id"]] == [True], listed
    reused = check(
        APIClient().post("/api/v1/auth/refresh", {"refresh_token": pair["refresh_token"]}, format="json"),
        "POST",
    )
    assert reused.status_code == 401 and reused.json()["code"] == "refresh_token_reused", reused.content
    again = check(APIClient().post("/api/v1/auth/token", credentials, format="json"), "POST").json()
    signed_out = check(api_a.delete(f"/api/v1/auth/devices/{again['device']['id']}"), "DELETE")
    assert signed_out.status_code == 204

    # A phone registers its push token (201), again on the next start (200), lists and removes it.
    push_device = {"platform": "apns", "token": "ab" * 32, "app_id": "com.example.visage", "locale": "pt-BR"}
    registered = check(api_a.post("/api/v1/devices", push_device, format="json"), "POST")
    assert registered.status_code == 201, registered.content
    assert check(api_a.post("/api/v1/devices", push_device, format="json"), "POST").status_code == 200
    assert [d["id"] for d in check(api_a.get("/api/v1/devices"), "GET").json()] == [registered.json()["id"]]
    assert check(api_a.delete(f"/api/v1/devices/{registered.json()['id']}"), "DELETE").status_code == 204

    # Last, the account is deleted: a wrong password first, then the right one.
    wrong = check(api_a.post("/api/v1/me/delete", {"password": "not-it"}, format="json"), "POST")
    assert wrong.status_code == 403 and wrong.json()["code"] == "password_incorrect", wrong.content
    deleted = check(api_a.post("/api/v1/me/delete", {"password": "alice-pass-123"}, format="json"), "POST")
    assert deleted.status_code == 204, deleted.content

    # Checkout needs Stripe: its success is typed in test_checkout_answers_match_the_schema.
    assert api_operations() - seen == {"billing_checkout_create"}


def test_checkout_answers_match_the_schema(api_a, settings, monkeypatch):
    from billing import stripe_gateway
    from billing.models import CreditPack
    from tests.helpers.fake_stripe import FakeStripeHttp

    pack = CreditPack.objects.create(name="100", credits=100, price="5.00", currency="usd", active=True)
    refused = api_a.post("/api/v1/billing/checkout", {"pack_id": pack.pk}, format="json")
    assert refused.status_code == 503
    assert_conforms(refused, method="POST")
    settings.STRIPE_SECRET_KEY = "sk_test_contract"
    monkeypatch.setattr(stripe_gateway, "http_client", FakeStripeHttp())
    started = api_a.post("/api/v1/billing/checkout", {"pack_id": pack.pk}, format="json")
    assert started.status_code == 201, started.content
    assert_conforms(started, method="POST")
    unknown = api_a.post("/api/v1/billing/checkout", {"pack_id": 999_999}, format="json")
    assert unknown.status_code == 404
    assert_conforms(unknown, method="POST")
    invalid = api_a.post("/api/v1/billing/checkout", {}, format="json")
    assert invalid.status_code == 400
    assert_conforms(invalid, method="POST")


UNKNOWN = "00000000-0000-4000-8000-000000000000"


SOURCE, TARGET = "<source photo>", "<target photo>"  # replaced by the astronaut pair's files


def _error_cases():
    """(name, client ("a": funded, "b": without credit, "anon", "bad": a wrong token), method, path, body,
    expected status)."""
    files = {"source": SOURCE, "target": TARGET}
    return [
        (
            "create_invalid_option",
            "a",
            "post",
            "/api/v1/jobs",
            {**files, "mode": "turbo", "consent": "true"},
            400,
        ),
        ("create_missing_file", "a", "post", "/api/v1/jobs", {"target": TARGET, "consent": "true"}, 400),
        (
            "create_corrupt",
            "a",
            "post",
            "/api/v1/jobs",
            {"source": b"GIF89a", "target": TARGET, "consent": "true"},
            400,
        ),
        ("create_no_credit", "b", "post", "/api/v1/jobs", {**files, "consent": "true"}, 402),
        ("create_no_consent", "a", "post", "/api/v1/jobs", files, 422),
        ("create_json", "a", "post_json", "/api/v1/jobs", {"mode": "fast"}, 415),
        ("create_anonymous", "anon", "post", "/api/v1/jobs", {**files, "consent": "true"}, 401),
        ("list_bad_state", "a", "get", "/api/v1/jobs?state=done", None, 400),
        ("list_past_the_end", "a", "get", "/api/v1/jobs?page=9", None, 404),
        ("list_anonymous", "anon", "get", "/api/v1/jobs", None, 401),
        ("get_unknown", "a", "get", f"/api/v1/jobs/{UNKNOWN}", None, 404),
        ("get_bad_wait", "a", "get", f"/api/v1/jobs/{UNKNOWN}?wait=99", None, 400),
        ("patch_bad_value", "a", "patch", f"/api/v1/jobs/{UNKNOWN}", {"favourite": "maybe"}, 400),
        ("patch_unknown", "a", "patch", f"/api/v1/jobs/{UNKNOWN}", {"favourite": True}, 404),
        ("delete_unknown", "a", "delete", f"/api/v1/jobs/{UNKNOWN}", None, 404),
        ("cancel_unknown", "a", "post", f"/api/v1/jobs/{UNKNOWN}/cancel", None, 404),
        ("share_unknown", "a", "post", f"/api/v1/jobs/{UNKNOWN}/share", None, 404),
        ("unshare_unknown", "a", "delete", f"/api/v1/jobs/{UNKNOWN}/share", None, 404),
        ("events_bad_id", "a", "get", "/api/v1/jobs/events?last_event_id=abc", None, 400),
        ("events_anonymous", "anon", "get", "/api/v1/jobs/events", None, 401),
        ("faces_missing_file", "a", "post", "/api/v1/faces", {}, 400),
        ("faces_not_a_photo", "a", "post", "/api/v1/faces", {"image": b"%PDF-1.4"}, 400),
        ("quotes_invalid", "a", "post_json", "/api/v1/quotes", {"width": 0, "mode": "fast"}, 400),
        ("quotes_anonymous", "anon", "post_json", "/api/v1/quotes", {}, 401),
        ("me_anonymous", "anon", "get", "/api/v1/me", None, 401),
        ("me_bad_token", "bad", "get", "/api/v1/me", None, 401),
        ("ledger_past_the_end", "a", "get", "/api/v1/ledger?page=9", None, 404),
        ("ledger_anonymous", "anon", "get", "/api/v1/ledger", None, 401),
        ("export_anonymous", "anon", "get", "/api/v1/ledger/export.csv", None, 401),
        ("packs_anonymous", "anon", "get", "/api/v1/billing/packs", None, 401),
        ("checkout_anonymous", "anon", "post_json", "/api/v1/billing/checkout", {"pack_id": 1}, 401),
        (
            "token_wrong_password",
            "anon",
            "post_json",
            "/api/v1/auth/token",
            {"username": "alice", "password": "x"},
            401,
        ),
        ("token_missing_fields", "anon", "post_json", "/api/v1/auth/token", {}, 400),
        ("token_revoke_anonymous", "anon", "delete", "/api/v1/auth/token", None, 401),
        ("wrong_accept", "a", "get_png", "/api/v1/me", None, 406),
        (
            "uploads_create_invalid",
            "a",
            "post_json",
            "/api/v1/uploads",
            {"kind": "pdf", "size_bytes": 0},
            400,
        ),
        ("uploads_create_anonymous", "anon", "post_json", "/api/v1/uploads", {}, 401),
        ("uploads_get_unknown", "a", "get", f"/api/v1/uploads/{UNKNOWN}", None, 404),
        ("uploads_complete_unknown", "a", "post", f"/api/v1/uploads/{UNKNOWN}/complete", None, 404),
        ("refresh_unknown", "anon", "post_json", "/api/v1/auth/refresh", {"refresh_token": "vrt_nope"}, 401),
        ("refresh_missing_token", "anon", "post_json", "/api/v1/auth/refresh", {}, 400),
        ("devices_anonymous", "anon", "get", "/api/v1/auth/devices", None, 401),
        ("device_sign_out_unknown", "a", "delete", "/api/v1/auth/devices/999999", None, 404),
        ("push_device_invalid", "a", "post_json", "/api/v1/devices", {"platform": "gcm", "token": ""}, 400),
        ("push_devices_anonymous", "anon", "get", "/api/v1/devices", None, 401),
        ("push_device_delete_unknown", "a", "delete", "/api/v1/devices/999999", None, 404),
    ]


ERROR_CASES = _error_cases()


@pytest.mark.parametrize("case", ERROR_CASES, ids=[case[0] for case in ERROR_CASES])
def test_every_documented_error_is_a_typed_problem(case, api_a, user_b, astronaut_pair):
    name, who, method, path, body, status = case
    photos = {SOURCE: astronaut_pair[0], TARGET: astronaut_pair[1]}
    client = {"a": api_a, "b": api_client_for(user_b), "anon": APIClient(), "bad": APIClient()}[who]
    if who == "bad":
        client.credentials(HTTP_AUTHORIZATION="Bearer not-a-token")
    if method == "post_json":
        response = client.post(path, body, format="json")
    elif method == "get_png":
        response = client.get(path, HTTP_ACCEPT="image/png")
    elif method == "post" and body is not None:
        files = {
            k: SimpleUploadedFile(f"{k}.bin", photos.get(v, v)) if k in ("source", "target", "image") else v
            for k, v in body.items()
        }
        response = client.post(path, files, format="multipart")
    elif method == "patch":
        response = client.patch(path, body, format="json")
    else:
        response = getattr(client, method)(path)
    assert response.status_code == status, (name, response.content)
    assert response["Content-Type"] == "application/problem+json", name
    assert_conforms(response, method="PATCH" if method == "patch" else method.split("_")[0].upper())
    assert json.loads(response.content)["code"]
