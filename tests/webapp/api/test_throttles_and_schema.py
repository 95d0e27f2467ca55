"""Every endpoint is throttled and its schema documents what it answers."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from tests.helpers.images import encode
from tests.helpers.problems import assert_problem
from tests.webapp.conftest import api_client_for

pytestmark = pytest.mark.django_db(transaction=True)


def schema() -> dict:
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return json.loads(response.content)


def api_operations(paths: dict):
    for path, operations in paths.items():
        if path.startswith("/api/v1/"):
            for method, operation in operations.items():
                if isinstance(operation, dict) and "responses" in operation:
                    yield path, method, operation


def test_every_operation_documents_429_401_503_as_problems():
    document = schema()
    operations = list(api_operations(document["paths"]))
    assert len(operations) >= 11
    for path, method, operation in operations:
        for status in ("401", "429", "503"):
            response = operation["responses"].get(status)
            assert response is not None, (path, method, status)
            assert "application/problem+json" in response["content"], (path, method, status)
        if "requestBody" in operation:
            assert {"400", "413", "415"} <= set(operation["responses"]), (path, method)
    assert "Problem" in document["components"]["schemas"]


def test_pages_past_the_end_are_documented_and_are_404_problems(api_a):
    paths = schema()["paths"]
    assert "404" in paths["/api/v1/jobs"]["get"]["responses"]
    assert "404" in paths["/api/v1/ledger"]["get"]["responses"]
    assert_problem(api_a.get("/api/v1/jobs?page=99"), 404, "not_found")
    assert_problem(api_a.get("/api/v1/ledger?page=99"), 404, "not_found")


def test_request_schemas_match_what_the_views_accept(api_a):
    components = schema()["components"]["schemas"]
    assert set(components["JobCreateRequest"]["required"]) >= {"source", "target"}
    assert "image" in components["FaceDetectRequest"]["required"]
    face_sources = components["JobCreateRequest"]["properties"]["face_sources"]
    assert face_sources["type"] == "array" and face_sources["minItems"] == 1
    assert face_sources["items"]["properties"]["face"]["maximum"] == 63
    create = schema()["paths"]["/api/v1/jobs"]["post"]["requestBody"]["content"]["multipart/form-data"]
    assert create["encoding"]["face_sources"]["contentType"] == "application/json"
    # An empty multipart body to /faces is refused, as the schema's `required` says.
    assert_problem(api_a.post("/api/v1/faces", {}, format="multipart"), 400, "missing_file")


@pytest.mark.parametrize("frames", ["", "1.5", "abc", None, True])
def test_quotes_refuse_frames_that_are_not_whole_numbers(api_a, frames):
    body = {"width": 640, "height": 480, "mode": "standard", "resolution": "720p", "frames": frames}
    assert_problem(api_a.post("/api/v1/quotes", body, format="json"), 400, "validation_error", field="frames")


def test_quotes_refuse_a_blank_frame_count(api_a):
    """Quotes take multipart too (to probe an uploaded video), where `frames=""` used to mean 1 frame."""
    body = {"width": 640, "height": 480, "mode": "standard", "resolution": "720p", "frames": ""}
    response = api_a.post("/api/v1/quotes", body)
    problem = assert_problem(response, 400, "validation_error")
    assert "frames" in problem["errors"]


def _owner(client):
    from webapp.accounts import selectors

    key = client._credentials["HTTP_AUTHORIZATION"].split()[1]
    return selectors.api_token_by_key(key).owner


def _calls(job_id: str):
    png = encode(__import__("skimage.data", fromlist=["astronaut"]).astronaut())
    return {
        "me": lambda c: c.get("/api/v1/me"),
        "jobs_list": lambda c: c.get("/api/v1/jobs"),
        "jobs_retrieve": lambda c: c.get(f"/api/v1/jobs/{job_id}"),
        "jobs_cancel": lambda c: c.post(f"/api/v1/jobs/{job_id}/cancel"),
        "jobs_destroy": lambda c: c.delete(f"/api/v1/jobs/{job_id}"),
        "ledger": lambda c: c.get("/api/v1/ledger"),
        "ledger_export": lambda c: c.get("/api/v1/ledger/export.csv"),
        "quotes": lambda c: c.post("/api/v1/quotes", {"width": 64, "height": 64, "mode": "fast",
                                                      "resolution": "720p"}, format="json"),
        "faces": lambda c: c.post("/api/v1/faces", {"image": SimpleUploadedFile("a.png", png)}, format="multipart"),
        # each call revokes the token it is made with: a fresh token of the same user each time
        "token_revoke": lambda c: api_client_for(_owner(c)).delete("/api/v1/auth/token"),
        "token_create": lambda c: c.post("/api/v1/auth/token", {"username": "x", "password": "y"}, format="json"),
    }


@pytest.mark.parametrize(
    "operation",
    ["me", "jobs_list", "jobs_retrieve", "jobs_cancel", "jobs_destroy", "ledger", "ledger_export", "quotes",
     "faces", "token_revoke", "token_create"],
)
def test_every_endpoint_answers_429_past_its_budget(api_a, monkeypatch, operation):
    from rest_framework.throttling import SimpleRateThrottle

    one_a_minute = {scope: "1/min" for scope in ("read", "job_create", "auth", "faces", "export")}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", one_a_minute)
    cache.clear()
    call = _calls(str(uuid.uuid4()))[operation]
    first = call(api_a)
    assert first.status_code != 429, first.content
    limited = call(api_a)
    body = assert_problem(limited, 429, "throttled")
    assert int(limited["Retry-After"]) > 0 and body["detail"]


def test_the_csv_export_has_its_own_smaller_budget(api_a, monkeypatch):
    from rest_framework.throttling import SimpleRateThrottle

    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", dict(SimpleRateThrottle.THROTTLE_RATES, export="2/min"))
    cache.clear()
    assert [api_a.get("/api/v1/ledger/export.csv").status_code for _ in range(3)] == [200, 200, 429]
    limited = api_a.get("/api/v1/ledger/export.csv")
    assert limited["Content-Type"] == "application/problem+json" and "RateLimit-Policy" in limited
    assert api_a.get("/api/v1/me").status_code == 200  # reads are still within their budget


def test_me_never_shows_negative_zero(api_a, funded_user):
    """0.30 held, then 0.10 captured and 0.20 released: SQLite's float sum is −2.8e-17."""
    from billing.choices import EntryKind
    from billing.models import Account, LedgerEntry

    account = Account.objects.get(user=funded_user)
    job_id = uuid.uuid4()
    for kind, amount in ((EntryKind.HOLD, "0.30"), (EntryKind.CAPTURE, "0.10"), (EntryKind.RELEASE, "0.20")):
        LedgerEntry.objects.create(account=account, kind=kind, amount=Decimal(amount), job_id=job_id)
    me = api_a.get("/api/v1/me").json()
    assert me["held"] == "0.00"
    assert me["balance"] == "999.90" and me["available"] == "999.90"


def test_a_budget_is_n_requests_in_any_window_and_refusals_are_not_counted():
    cache.clear()
    window = {"limit": 3, "window_s": 60.0}
    assert [cache.sliding_window("t", now=1000.0 + i, **window)[:2] for i in range(3)] == [
        (True, 1), (True, 2), (True, 3)
    ]
    allowed, count, wait_s = cache.sliding_window("t", now=1030.0, **window)
    assert (allowed, count, wait_s) == (False, 3, 30.0)  # the oldest (t=1000) leaves at 1060
    assert cache.sliding_window("t", now=1059.5, **window)[0] is False
    # Refusals did not push the window: at 1060 the first request has left, one slot is free.
    assert cache.sliding_window("t", now=1060.0, **window)[:2] == (True, 3)
    assert cache.sliding_window("t", now=1060.5, **window)[0] is False
    assert cache.sliding_window("other", now=1060.5, **window)[:2] == (True, 1)  # keys apart


def test_ratelimit_headers_count_down_and_retry_after_names_the_wait(api_a, monkeypatch):
    from rest_framework.throttling import SimpleRateThrottle

    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", dict(SimpleRateThrottle.THROTTLE_RATES, read="3/hour"))
    cache.clear()
    answers = [api_a.get("/api/v1/me") for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert [a["RateLimit"] for a in answers[:3]] == ['"read";r=2;t=0', '"read";r=1;t=0', '"read";r=0;t=0']
    assert answers[3]["RateLimit-Policy"] == '"read";q=3;w=3600'
    assert 3590 <= int(answers[3]["Retry-After"]) <= 3600


def test_throttling_fails_open_when_redis_is_down(api_a, settings):
    settings.CACHES = {"default": {"BACKEND": "webapp.ops.cache.FailOpenRedisCache", "LOCATION": "redis://127.0.0.1:9/0",
                                   "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}}}
    assert cache.sliding_window("t", limit=1, window_s=60, now=1000.0) == (True, 0, 0.0)
    assert [api_a.get("/api/v1/me").status_code for _ in range(2)] == [200, 200]
