"""POST /api/v1/quotes: the price of a job before it is submitted (the one price every page and the API show)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.billing.conftest import round_number_plan

pytestmark = pytest.mark.django_db

QUOTE = {"width": 1920, "height": 1080, "frames": 300, "mode": "standard", "resolution": "1080p"}


@pytest.fixture
def plan(db):
    return round_number_plan()


@pytest.fixture
def client_a(funded_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(funded_user)
    return client


def test_quote(client_a, plan):
    response = client_a.post("/api/v1/quotes", QUOTE, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    # 300 × 1.5 × 1.0 × 0.15 × 0.10 = 6.75; the hold is the price itself
    assert body["amount"] == "6.75" and body["hold_amount"] == "6.75" and body["amount_minor"] == 675
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
