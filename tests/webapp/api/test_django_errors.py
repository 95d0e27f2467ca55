"""Every error under /api/ is problem+json, also Django's own; DEBUG off by default; production
cookie flags; server-side cursors off behind a transaction pooler."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.helpers.problems import assert_problem
from tests.webapp.conftest import api_client_for

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("path", ["/api/v1/jobs/1", "/api/v1/nothing-here", "/api/v2/jobs", "/api/"])
def test_unrouted_api_paths_are_404_problems(user_a, path):
    body = assert_problem(api_client_for(user_a).get(path), 404, "not_found")
    assert body["instance"] == path and body["request_id"]


def test_unrouted_paths_outside_the_api_are_not_problems():
    response = Client().get("/no-such-page/")
    assert response.status_code == 404 and "problem+json" not in response["Content-Type"]


def test_too_many_form_fields_is_a_400_problem(user_a, settings):
    fields = "&".join(f"f{i}=x" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 200))
    response = api_client_for(user_a).post(
        "/api/v1/jobs", fields, content_type="application/x-www-form-urlencoded"
    )
    body = assert_problem(response, 400, "too_many_fields")
    assert str(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS) in body["detail"]


def test_a_huge_form_field_is_a_413_problem(user_a, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000  # stands for 41 MB; the multipart limit derives from it too
    boundary = "BoUnDaRy"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"mode\"\r\n\r\n{'x' * 5000}\r\n--{boundary}--\r\n"
    )
    response = api_client_for(user_a).post(
        "/api/v1/jobs", body, content_type=f"multipart/form-data; boundary={boundary}"
    )
    assert_problem(response, 413, "request_too_large")


def test_an_oversized_json_body_is_refused_before_it_is_read(user_a, settings):
    """A 150 MB JSON to /quotes: refused on Content-Length, nothing parsed."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    response = api_client_for(user_a).post(
        "/api/v1/quotes", json.dumps({"width": 10, "height": 10, "pad": "x" * 20_000}), content_type="application/json"
    )
    body = assert_problem(response, 413, "request_too_large")
    assert "10000 bytes" in body["detail"]


def test_method_not_allowed_outside_drf_is_a_problem(user_a):
    response = api_client_for(user_a).post("/api/schema/")
    assert response.status_code == 405
    assert response["Content-Type"] == "application/problem+json"
    assert "GET" in response["Allow"]


def test_an_unexpected_error_is_a_500_problem(user_a, monkeypatch):
    from webapp.api.account import MeView

    def broken(self, request):
        raise RuntimeError("boom")

    monkeypatch.setattr(MeView, "get", broken)
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(user_a)
    body = assert_problem(client.get("/api/v1/me"), 500, "server_error")
    assert "boom" not in json.dumps(body)  # nothing internal leaks


def _settings_in_subprocess(env: dict, expression: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "VISAGE_PRODUCTION", "DJANGO_SETTINGS_MODULE")}
    result = subprocess.run(
        [sys.executable, "-c", f"import webapp.settings as s; print({expression})"],
        cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=120, check=True,
    )
    return result.stdout.strip()


def test_debug_is_off_unless_asked_for():
    assert _settings_in_subprocess({}, "s.DEBUG") == "False"
    assert _settings_in_subprocess({"DEBUG": "1"}, "s.DEBUG") == "True"


def test_static_files_are_served_with_debug_off(client, settings):
    assert settings.DEBUG is False
    response = client.get("/static/visage/site.js")
    assert response.status_code == 200
    assert b"csrfToken" in b"".join(response.streaming_content)


def test_production_cookies_are_secure_http_only_and_same_site(tmp_path):
    production = {
        "VISAGE_PRODUCTION": "1", "SECRET_KEY": "x" * 60, "ALLOWED_HOSTS": "visage.example",
        "S3_ACCESS_KEY": "prod-key", "S3_SECRET_KEY": "prod-secret", "VISAGE_DATA_DIR": str(tmp_path),
        "VISAGE_METRICS_KEY": "metrics-key",
        "VISAGE_PROVENANCE_ENABLED": "0",  # production needs a C2PA chain otherwise (tested in test_provenance)
    }
    values = _settings_in_subprocess(
        production,
        "[s.DEBUG, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SESSION_COOKIE_HTTPONLY, "
        "s.CSRF_COOKIE_HTTPONLY, s.SESSION_COOKIE_SAMESITE, s.CSRF_COOKIE_SAMESITE]",
    )
    assert values == "[False, True, True, True, True, 'Lax', 'Lax']"


@pytest.mark.parametrize(
    ("change", "refusal"),
    [({"DEBUG": "1"}, "DEBUG must be off"), ({"S3_SECRET_KEY": ""}, "S3_SECRET_KEY")],
    ids=["debug", "default-s3-secret"],
)
def test_production_refuses_debug_and_the_development_s3_secret(tmp_path, change, refusal):
    """Both started: DEBUG's error pages in production, and the public development S3 secret
    whenever only the access key was set."""
    production = {
        "VISAGE_PRODUCTION": "1", "SECRET_KEY": "x" * 60, "ALLOWED_HOSTS": "visage.example",
        "S3_ACCESS_KEY": "prod-key", "S3_SECRET_KEY": "prod-secret", "VISAGE_DATA_DIR": str(tmp_path),
        "VISAGE_METRICS_KEY": "metrics-key",
        "VISAGE_PROVENANCE_ENABLED": "0",
    }
    with pytest.raises(subprocess.CalledProcessError) as refused:
        _settings_in_subprocess({**production, **change}, "s.DEBUG")
    assert refusal in refused.value.stderr


def test_server_side_cursors_are_off_behind_a_transaction_pooler():
    expression = "s.DATABASES['default']['DISABLE_SERVER_SIDE_CURSORS']"
    assert _settings_in_subprocess({}, expression) == "False"
    assert _settings_in_subprocess({"DATABASE_TRANSACTION_POOLING": "1"}, expression) == "True"


@pytest.mark.parametrize(
    "method, path, data",
    [
        ("get", "/api/v1/jobs?q=a%00b", None),  # the job search
        ("get", "/?q=a%00b", None),  # the gallery's search
        ("get", "/account/credits/success/?session_id=cs_%00", None),
        ("post", "/account/credits/request", "credits=10&note=hi%00there"),
    ],
)
def test_a_nul_character_in_a_query_or_form_is_a_400_not_a_500(user_a, method, path, data):
    """PostgreSQL refuses NUL in text: these answered 500 there (SQLite took it)."""
    client = Client(raise_request_exception=False)
    client.force_login(user_a)
    if method == "get":
        response = client.get(path)
    else:
        response = client.post(path, data, content_type="application/x-www-form-urlencoded")
    if path.startswith("/api/"):
        body = assert_problem(response, 400, "bad_request")
        assert "NUL" in body["detail"]
    else:
        assert response.status_code == 400 and b"NUL" in response.content
