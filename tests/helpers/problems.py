"""The API's error answers: RFC 9457 problem+json with Visage's code and field errors."""

from __future__ import annotations


def assert_problem(response, status: int, code: str, field: str | None = None) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status
    assert body["code"] == code
    assert body["type"].endswith("/errors/" + code.replace("_", "-"))
    assert body["title"] and body["detail"]
    if field:
        assert field in body["errors"], body
    return body
