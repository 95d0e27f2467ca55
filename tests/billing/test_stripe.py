"""Buying credits with Stripe: Checkout Session creation (stubbed at the HTTP boundary only) and the
webhook with payloads signed by Stripe's own helper — valid, bad signature, replayed, duplicated,
out of order, refunds and disputes — checking the ledger's invariants after each case."""

from __future__ import annotations

import json
import time
import uuid
from decimal import Decimal

import pytest
import stripe
from django.core.exceptions import ValidationError
from django.db.models import Sum
from rest_framework.test import APIClient

from billing import selectors, stripe_gateway
from billing.choices import EntryKind
from billing.models import Account, CheckoutSession, CreditPack, LedgerEntry, StripeEvent
from tests.helpers.fake_stripe import FakeStripeHttp
from tests.helpers.ledger_checks import invariants

pytestmark = pytest.mark.django_db

WEBHOOK_SECRET = "whsec_test_secret_for_visage"
URL = "/api/v1/billing/stripe/webhook"


@pytest.fixture
def stripe_on(settings, monkeypatch):
    settings.STRIPE_SECRET_KEY = "sk_test_visage"
    settings.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET
    fake = FakeStripeHttp()
    monkeypatch.setattr(stripe_gateway, "http_client", fake)
    return fake


@pytest.fixture
def pack(db):
    return CreditPack.objects.create(
        name="Starter", credits=Decimal("100.00"), price=Decimal("9.99"), currency="USD"
    )


def signed_post(event: dict, *, secret: str = WEBHOOK_SECRET, timestamp: int | None = None):
    payload = json.dumps(event)
    header = stripe.WebhookSignature.generate_signature_header(payload, secret, timestamp=timestamp)
    return APIClient().post(URL, data=payload, content_type="application/json", HTTP_STRIPE_SIGNATURE=header)


def start_checkout(user, pack) -> CheckoutSession:
    from billing import payments

    started = payments.checkout_start(
        user=user,
        pack=pack,
        success_url="https://visage.test/ok?session_id={CHECKOUT_SESSION_ID}",
        cancel_url="https://visage.test/cancel",
    )
    assert started.url.startswith("https://checkout.stripe.com/")
    return started.session


def completed(session: CheckoutSession, *, event_id: str | None = None, payment_intent: str = "pi_1") -> dict:
    return {
        "id": event_id or f"evt_{uuid.uuid4().hex[:16]}",
        "object": "event",
        "type": "checkout.session.completed",
        "livemode": False,
        "created": int(time.time()),
        "data": {
            "object": {
                "id": session.stripe_session_id,
                "object": "checkout.session",
                "payment_status": "paid",
                "payment_intent": payment_intent,
                "amount_total": 999,
                "currency": "usd",
                "client_reference_id": str(session.account_id),
            }
        },
    }


def charge_event(
    kind: str, *, payment_intent: str = "pi_1", amount_refunded: int = 999, refunded=True
) -> dict:
    obj = {
        "id": "ch_1",
        "object": "charge",
        "payment_intent": payment_intent,
        "amount": 999,
        "amount_refunded": amount_refunded,
        "refunded": refunded,
    }
    if kind == "charge.dispute.created":
        obj = {
            "id": "dp_1",
            "object": "dispute",
            "charge": "ch_1",
            "payment_intent": payment_intent,
            "amount": 999,
        }
    return {
        "id": f"evt_{uuid.uuid4().hex[:16]}",
        "object": "event",
        "type": kind,
        "livemode": False,
        "created": int(time.time()),
        "data": {"object": obj},
    }


def test_checkout_session_is_created_in_payment_mode_through_stripes_library(stripe_on, pack, user_a):
    session = start_checkout(user_a, pack)
    method, url, form = stripe_on.requests[0]
    assert (method, url) == ("post", "https://api.stripe.com/v1/checkout/sessions")
    assert form["mode"] == "payment"
    assert form["line_items[0][price_data][unit_amount]"] == "999"
    assert form["line_items[0][price_data][currency]"] == "usd"
    assert form["metadata[pack_id]"] == str(pack.pk)
    assert session.status == "open" and session.credits == Decimal("100.00")
    assert selectors.account_balance(user=user_a).balance == Decimal("0.00")  # nothing until Stripe says paid


def test_paid_session_credits_exactly_once_even_when_replayed_or_duplicated(stripe_on, pack, user_a):
    session = start_checkout(user_a, pack)
    event = completed(session)
    first = signed_post(event)
    assert first.status_code == 200, first.content
    assert selectors.account_balance(user=user_a).balance == Decimal("100.00")
    invariants(user_a)
    # Stripe retries the very same event: answered 200, nothing changes.
    assert signed_post(event).status_code == 200
    # A second, different event for the same session (async payment succeeded, or a duplicate).
    again = completed(session)
    again["type"] = "checkout.session.async_payment_succeeded"
    assert signed_post(again).status_code == 200
    assert selectors.account_balance(user=user_a).balance == Decimal("100.00")
    assert LedgerEntry.objects.filter(kind=EntryKind.PURCHASE).count() == 1
    assert StripeEvent.objects.count() == 2
    session.refresh_from_db()
    assert session.status == "paid" and session.payment_intent == "pi_1"
    invariants(user_a)


def test_bad_or_missing_signature_is_a_400_problem_and_changes_nothing(stripe_on, pack, user_a):
    session = start_checkout(user_a, pack)
    response = signed_post(completed(session), secret="whsec_someone_else")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "bad_signature"
    stale = signed_post(completed(session), timestamp=int(time.time()) - 3600)  # replay of an old capture
    assert stale.status_code == 400
    unsigned = APIClient().post(URL, data=json.dumps(completed(session)), content_type="application/json")
    assert unsigned.status_code == 400
    assert LedgerEntry.objects.count() == 0 and StripeEvent.objects.count() == 0
    invariants(user_a)


def test_refund_reverses_the_credits_and_flags_the_account(stripe_on, pack, user_a):
    session = start_checkout(user_a, pack)
    signed_post(completed(session))
    response = signed_post(charge_event("charge.refunded"))
    assert response.status_code == 200
    assert selectors.account_balance(user=user_a).balance == Decimal("0.00")
    account = Account.objects.get(user=user_a)
    assert account.flagged_at is not None and "refunded" in account.flag_reason
    # A dispute on top of the refund reverses nothing more.
    signed_post(charge_event("charge.dispute.created"))
    assert LedgerEntry.objects.filter(kind=EntryKind.REVERSAL).count() == 1
    assert selectors.account_balance(user=user_a).balance == Decimal("0.00")
    invariants(user_a)


def test_partial_refund_reverses_its_share(stripe_on, pack, user_a):
    session = start_checkout(user_a, pack)
    signed_post(completed(session))
    signed_post(charge_event("charge.refunded", amount_refunded=333, refunded=False))
    assert selectors.account_balance(user=user_a).balance == Decimal("66.67")  # 100 − 100 × 333/999
    invariants(user_a)


@pytest.mark.parametrize("order", [(300, 600, 999), (999, 600, 300), (600, 300, 999, 600)])
def test_partial_refunds_are_cumulative_in_any_order(stripe_on, pack, user_a, order):
    """Stripe's amount_refunded is the running total: refunds of 300, 600 and 999 (of 999) end
    with every credit taken back once, whatever order or repetition the events arrive in."""
    session = start_checkout(user_a, pack)
    signed_post(completed(session))
    taken = []
    for refunded in order:
        event = charge_event("charge.refunded", amount_refunded=refunded, refunded=refunded == 999)
        assert signed_post(event).status_code == 200
        assert signed_post(event).status_code == 200  # the same event again: a replay
        taken.append(selectors.account_balance(user=user_a).balance)
        invariants(user_a)
    assert taken[-1] == Decimal("0.00")
    assert taken == sorted(taken, reverse=True)  # never credits anything back
    assert LedgerEntry.objects.filter(kind=EntryKind.REVERSAL).aggregate(s=Sum("amount"))["s"] == Decimal("100.00")


def test_partial_refund_before_the_payment_then_more_refunded(stripe_on, pack, user_a):
    session = start_checkout(user_a, pack)
    signed_post(charge_event("charge.refunded", payment_intent="pi_early", amount_refunded=333, refunded=False))
    signed_post(completed(session, payment_intent="pi_early"))
    assert selectors.account_balance(user=user_a).balance == Decimal("66.67")
    signed_post(charge_event("charge.refunded", payment_intent="pi_early", amount_refunded=666, refunded=False))
    assert selectors.account_balance(user=user_a).balance == Decimal("33.33")
    invariants(user_a)


def test_dispute_arriving_before_the_payment_is_applied_when_the_payment_arrives(stripe_on, pack, user_a):
    session = start_checkout(user_a, pack)
    assert signed_post(charge_event("charge.dispute.created", payment_intent="pi_early")).status_code == 200
    assert selectors.account_balance(user=user_a).balance == Decimal("0.00")
    signed_post(completed(session, payment_intent="pi_early"))
    # Credited, then reversed: the disputed money buys nothing, and the account is flagged.
    assert LedgerEntry.objects.filter(kind=EntryKind.PURCHASE).count() == 1
    assert LedgerEntry.objects.filter(kind=EntryKind.REVERSAL).count() == 1
    assert selectors.account_balance(user=user_a).balance == Decimal("0.00")
    assert Account.objects.get(user=user_a).flagged_at is not None
    invariants(user_a)


def test_unknown_session_and_unpaid_sessions_credit_nothing(stripe_on, pack, user_a):
    session = start_checkout(user_a, pack)
    unpaid = completed(session)
    unpaid["data"]["object"]["payment_status"] = "unpaid"
    assert signed_post(unpaid).status_code == 200
    stranger = completed(session)
    stranger["data"]["object"]["id"] = "cs_not_ours"
    assert signed_post(stranger).status_code == 200
    tampered = completed(session)
    tampered["data"]["object"]["amount_total"] = 1
    assert signed_post(tampered).status_code == 200
    assert selectors.account_balance(user=user_a).balance == Decimal("0.00")
    invariants(user_a)


def test_without_keys_payments_say_so(settings, pack, user_a):
    settings.STRIPE_SECRET_KEY = ""
    settings.STRIPE_WEBHOOK_SECRET = ""
    from tests.webapp.conftest import api_client_for

    client = api_client_for(user_a)
    packs = client.get("/api/v1/billing/packs").json()
    assert packs["payments_enabled"] is False and packs["packs"][0]["price_minor"] == 999
    response = client.post("/api/v1/billing/checkout", {"pack_id": pack.pk}, format="json")
    assert response.status_code == 503 and response.json()["code"] == "payments_not_configured"
    assert APIClient().post(URL, data="{}", content_type="application/json").status_code == 503


def test_checkout_over_the_api(stripe_on, pack, user_a):
    from tests.webapp.conftest import api_client_for

    client = api_client_for(user_a)
    response = client.post("/api/v1/billing/checkout", {"pack_id": pack.pk}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["url"].startswith("https://checkout.stripe.com/")
    _, _, form = stripe_on.requests[0]
    assert form["success_url"].endswith("/account/credits/success/?session_id={CHECKOUT_SESSION_ID}")
    assert client.post("/api/v1/billing/checkout", {"pack_id": 9999}, format="json").status_code == 404
    pack.active = False
    pack.save()
    assert client.post("/api/v1/billing/checkout", {"pack_id": pack.pk}, format="json").status_code == 404


@pytest.mark.parametrize(
    "currency, price, minor",
    [("JPY", "1000", "1000"), ("KRW", "5900", "5900"), ("USD", "9.99", "999"), ("KWD", "3.25", "3250")],
)
def test_checkout_sends_the_price_in_the_currencys_own_minor_unit_and_credits_that_amount(
    stripe_on, user_a, currency, price, minor
):
    """Stripe counts a zero-decimal currency in whole units: ¥1,000 is 1000 (it was sent as 100000,
    charging the buyer 100 times the price), a three-decimal one in thousandths."""
    pack = CreditPack.objects.create(name="Local", credits=Decimal("100.00"), price=Decimal(price), currency=currency)
    session = start_checkout(user_a, pack)
    form = stripe_on.requests[0][2]
    assert form["line_items[0][price_data][unit_amount]"] == minor
    assert form["line_items[0][price_data][currency]"] == currency.lower()
    event = completed(session)
    event["data"]["object"]["amount_total"] = int(minor)
    event["data"]["object"]["currency"] = currency.lower()
    assert signed_post(event).status_code == 200
    assert selectors.account_balance(user=user_a).balance == Decimal("100.00")
    # The old, 100-times amount is not what the pack costs: nothing more is credited for it.
    wrong = completed(session)
    wrong["data"]["object"]["amount_total"] = int(minor) * 100
    assert signed_post(wrong).status_code == 200
    assert LedgerEntry.objects.filter(kind=EntryKind.PURCHASE).count() == 1


@pytest.mark.parametrize("currency", ["JPY", "ISK"])
def test_a_pack_priced_with_a_fraction_of_a_whole_unit_currency_is_refused(currency):
    pack = CreditPack(name="Odd", credits=Decimal("10"), price=Decimal("1000.50"), currency=currency.lower())
    with pytest.raises(ValidationError) as refused:
        pack.full_clean()
    assert "whole units" in str(refused.value.message_dict["price"])
    CreditPack(name="Whole", credits=Decimal("10"), price=Decimal("1000"), currency=currency).full_clean()


def test_a_buyer_paying_in_their_own_currency_is_credited(stripe_on, pack, user_a, caplog):
    """Adaptive Pricing: the buyer pays 9.21 EUR for the 9.99 USD pack. An endpoint on an API version
    before 2025-03-31 gets the buyer's currency in `amount_total`/`currency` and ours in
    `currency_conversion` (the pack was paid: it must be credited); newer versions keep ours there
    and the buyer's in `presentment_details`."""
    legacy = start_checkout(user_a, pack)
    event = completed(legacy)
    event["data"]["object"] |= {
        "amount_total": 921, "currency": "eur",
        "currency_conversion": {"amount_subtotal": 999, "amount_total": 999, "fx_rate": "0.922", "source_currency": "usd"},
    }
    assert signed_post(event).status_code == 200
    assert selectors.account_balance(user=user_a).balance == Decimal("100.00")

    current = start_checkout(user_a, pack)
    event = completed(current, payment_intent="pi_2")
    event["data"]["object"]["presentment_details"] = {"presentment_amount": 921, "presentment_currency": "eur"}
    assert signed_post(event).status_code == 200
    assert selectors.account_balance(user=user_a).balance == Decimal("200.00")

    # The right number in another currency (999 yen is not 9.99 dollars) is not the pack's price.
    other = start_checkout(user_a, pack)
    event = completed(other, payment_intent="pi_3")
    event["data"]["object"]["currency"] = "jpy"
    with caplog.at_level("ERROR", logger="billing.payments"):
        assert signed_post(event).status_code == 200
    assert selectors.account_balance(user=user_a).balance == Decimal("200.00")
    assert "paid 999 jpy, the pack costs 999 usd; not credited" in StripeEvent.objects.get(event_id=event["id"]).outcome
    assert "not credited" in caplog.text  # a person must look: the buyer paid
    invariants(user_a)
