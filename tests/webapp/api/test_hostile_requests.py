"""Requests an attacker sends on purpose get a specific 4xx problem, never a 500 (#30)."""

from __future__ import annotations

import json
import uuid

import pytest
from rest_framework.test import APIClient

from webapp.api.parsers import MAX_JSON_DEPTH, json_too_deep

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
