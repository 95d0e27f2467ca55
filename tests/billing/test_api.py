"""POST /api/v1/quotes, GET /api/v1/ledger, GET /api/v1/ledger/export.csv."""

from __future__ import annotations

import csv
import io
import uuid
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from billing import services

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.billing.urls")]

QUOTE = {"width": 1920, "height": 1080, "frames": 300, "mode": "standard", "resolution": "1080p"}


@pytest.fixture
def client_a(funded_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(funded_user)
    return client


def test_quote(client_a, plan):
    response = client_a.post("/api/v1/quotes", QUOTE, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    # 300 × 1.5 × 1.0 × 0.15 × 0.10 = 6.75; hold × 1.5 = 10.13
    assert body["amount"] == "6.75" and body["hold_amount"] == "10.13"
    assert body["processed_width"] == 1920 and body["frames"] == 300
    assert body["currency"] == "USD" and body["queue"] == "default"
    assert body["available"] == "1000.00" and body["sufficient"] is True


def test_quote_defaults_to_one_frame(client_a, plan):
    body = client_a.post("/api/v1/quotes", {**QUOTE, "frames": None} | {"mode": "hq"}, format="json")
    assert body.status_code == 400  # null is not "absent"
    data = {key: value for key, value in QUOTE.items() if key != "frames"}
    body = client_a.post("/api/v1/quotes", data, format="json").json()
    assert body["frames"] == 1 and body["amount"] == "0.05"  # 0.0225 raised to the minimum


def test_quote_requires_authentication(plan):
    response = APIClient().post("/api/v1/quotes", QUOTE, format="json")
    assert response.status_code == 401


@pytest.mark.parametrize(
    "bad",
    [
        {"width": 0},
        {"height": -5},
        {"frames": 0},
        {"mode": "turbo"},
        {"resolution": "4k"},
        {"width": "wide"},
        {"width": 10**9},
    ],
)
def test_quote_bad_values(client_a, plan, bad):
    response = client_a.post("/api/v1/quotes", {**QUOTE, **bad}, format="json")
    assert response.status_code == 400
    assert next(iter(bad)) in str(response.content)


def test_ledger_lists_only_the_callers_entries(client_a, funded_user, user_b, plan):
    services.account_top_up(user=user_b, amount=Decimal("55.00"), actor=None, reason="bob's money")
    quote = services.quote_job(user=funded_user, **QUOTE)
    job_id = uuid.uuid4()
    services.hold_place(user=funded_user, job_id=job_id, quote=quote)
    response = client_a.get("/api/v1/ledger")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    assert [(row["kind"], row["amount"]) for row in body["results"]] == [
        ("hold", "10.1300"),
        ("top_up", "1000.0000"),
    ]
    assert body["results"][0]["job_id"] == str(job_id)
    assert "actor" not in body["results"][0]
    assert APIClient().get("/api/v1/ledger").status_code == 401


def test_ledger_is_paginated(client_a, funded_user):
    for index in range(25):
        services.account_top_up(
            user=funded_user, amount=Decimal(index + 1), actor=None, reason=f"top-up {index}"
        )
    first = client_a.get("/api/v1/ledger").json()
    assert first["count"] == 26 and len(first["results"]) == 20 and first["next"]
    assert first["results"][0]["amount"] == "25.0000"  # newest first


def test_ledger_csv_export(client_a, funded_user, user_b):
    services.account_top_up(user=user_b, amount=Decimal("55.00"), actor=None, reason="bob's money")
    services.account_top_up(user=funded_user, amount=Decimal("2.50"), actor=None, reason="=HYPERLINK(evil)")
    response = client_a.get("/api/v1/ledger/export.csv", HTTP_ACCEPT="text/csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(row["kind"], row["amount"], row["reason"]) for row in rows] == [
        ("top_up", "2.5000", "'=HYPERLINK(evil)"),
        ("top_up", "1000.0000", "test funding"),
    ]
