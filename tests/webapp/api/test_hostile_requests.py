"""Requests an attacker sends on purpose get a specific 4xx problem, never a 500 (#30)."""

from __future__ import annotations

import json
import uuid

import pytest
from rest_framework.test import APIClient

from webapp.jobs.json_nesting import MAX_JSON_DEPTH, json_too_deep

pytestmark = pytest.mark.django_db

DEEP = "[" * 1000 + "]" * 1000


def assert_nesting_refused(response) -> None:
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "parse_error"
    assert f"more than {MAX_JSON_DEPTH} levels" in body["detail"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/v1/quotes"),
        ("post", "/api/v1/billing/checkout"),
        ("patch", "/api/v1/jobs/{job}"),
    ],
)
def test_deeply_nested_json_is_a_400_for_signed_in_users(api_a, method, path):
    url = path.format(job=uuid.uuid4())
    response = getattr(api_a, method)(url, data=DEEP, content_type="application/json")
    assert_nesting_refused(response)


def test_deeply_nested_json_is_a_400_before_sign_in():
    response = APIClient().post("/api/v1/auth/token", data=DEEP, content_type="application/json")
    assert_nesting_refused(response)


def test_nesting_just_over_the_limit_is_refused_and_at_the_limit_parsed(api_a):
    over = {"a": json.loads("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)}
    assert_nesting_refused(api_a.post("/api/v1/quotes", data=json.dumps(over), content_type="application/json"))
    within = api_a.post("/api/v1/quotes", data=json.dumps({"mode": [[1]]}), content_type="application/json")
    assert within.status_code == 400 and within.json()["code"] != "parse_error"  # reached validation


def test_depth_counts_objects_and_lists_without_recursion():
    assert not json_too_deep({"a": [1, {"b": 2}]}, limit=3)
    assert json_too_deep({"a": [1, {"b": [2]}]}, limit=3)
    assert not json_too_deep("text" * 100)
    deep = []
    for _ in range(100_000):  # far beyond Python's recursion limit
        deep = [deep]
    assert json_too_deep(deep)


@pytest.mark.parametrize("since", ["2026-02-31T00:00:00", "2026-01-01T25:00", "yesterday"])
def test_gallery_status_with_an_impossible_since_is_a_400(client, user_a, since):
    client.force_login(user_a)
    response = client.get("/jobs/status.json", {"since": since})
    assert response.status_code == 400
    assert "since must be a date and time" in response.json()["error"]


def test_gallery_status_accepts_a_naive_or_zoned_since(client, user_a):
    client.force_login(user_a)
    for since in ("2026-01-01T00:00:00", "2026-01-01T00:00:00+08:00"):
        response = client.get("/jobs/status.json", {"since": since})
        assert response.status_code == 200 and response.json()["new"] == []


@pytest.mark.django_db(transaction=True)
def test_an_idempotency_key_over_the_limit_is_refused_not_cut(api_a, astronaut_pair):
    """Cut to 255 characters, two keys that differ only after that would return each other's job."""
    from tests.helpers.uploads import nothing_stored
    from tests.webapp.conftest import post_job

    source, target, _ = astronaut_pair
    shared = "k" * 255
    response = post_job(api_a, source, target, headers={"Idempotency-Key": shared + "-first"})
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid_idempotency_key"
    assert "261 characters" in body["detail"] and "limit is 255" in body["detail"]
    assert nothing_stored()
    assert post_job(api_a, source, target, headers={"Idempotency-Key": shared}).status_code == 201


@pytest.mark.django_db(transaction=True)
def test_deeply_nested_face_sources_is_a_field_error(api_a, astronaut_pair):
    from tests.webapp.conftest import post_job

    source, target, _ = astronaut_pair
    response = post_job(api_a, source, target, face_sources=DEEP)
    assert response.status_code == 400, response.content
    assert f"more than {MAX_JSON_DEPTH} levels" in response.json()["errors"]["face_sources"][0]
