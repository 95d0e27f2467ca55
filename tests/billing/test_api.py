"""GET /api/v1/ledger, GET /api/v1/ledger/export.csv (POST /api/v1/quotes: tests/webapp/api/test_quotes.py)."""

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
        ("hold", "6.7500"),  # the hold is the quote
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
