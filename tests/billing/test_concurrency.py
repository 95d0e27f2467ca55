"""Parallel submissions for one user can never overdraw (PostgreSQL row locks; see services.hold_place);
a refund racing its own payment's webhook is never lost (payments._payment_lock)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from decimal import Decimal

import pytest
import stripe
from django.db import connection, connections

from billing import payments, selectors, services, stripe_gateway
from billing.choices import EntryKind
from billing.errors import InsufficientCredit
from billing.models import CreditPack, LedgerEntry, PricePlan
from tests.helpers.fake_stripe import FakeStripeHttp

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="needs PostgreSQL row locks (SELECT … FOR UPDATE); run with DATABASE_URL=postgres://…",
)

PARALLEL = 20
AFFORDABLE = 10


@pytest.mark.django_db(transaction=True)
def test_parallel_holds_never_overdraw(django_user_model):
    assert PricePlan.objects.filter(is_default=True).exists()  # restored by tests/conftest.py:reference_data
    user = django_user_model.objects.create_user(username="racer", password="racer-pass-123")
    quote = services.quote_job(
        user=user, width=1920, height=1080, frames=300, mode="standard", resolution="1080p"
    )
    services.account_top_up(
        user=user, amount=quote.hold_amount * AFFORDABLE, actor=None, reason="exactly ten holds"
    )

    barrier = threading.Barrier(PARALLEL)
    placed: list[uuid.UUID] = []
    refused: list[InsufficientCredit] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def submit() -> None:
        try:
            barrier.wait(timeout=30)
            job_id = uuid.uuid4()
            services.hold_place(user=user, job_id=job_id, quote=quote)
            with lock:
                placed.append(job_id)
        except InsufficientCredit as exc:
            with lock:
                refused.append(exc)
        except BaseException as exc:  # noqa: BLE001 - reported below
            with lock:
                errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit) for _ in range(PARALLEL)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not errors, errors
    assert len(placed) == AFFORDABLE
    assert len(refused) == PARALLEL - AFFORDABLE
    assert all(exc.available >= 0 and exc.available < quote.hold_amount for exc in refused)
    assert LedgerEntry.objects.filter(account__user=user, kind="hold").count() == AFFORDABLE
    balance = selectors.account_balance(user=user)
    assert balance.held == quote.hold_amount * AFFORDABLE
    assert balance.available == Decimal("0.00")


def _stripe_delivery(event: dict, secret: str) -> dict:
    payload = json.dumps(event)
    return {"payload": payload.encode(), "signature": stripe.WebhookSignature.generate_signature_header(payload, secret)}


def _someone_waits_for_an_advisory_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        return cursor.fetchone()[0] > 0


@pytest.mark.django_db(transaction=True)
def test_a_refund_arriving_while_its_payment_is_credited_is_not_lost(settings, monkeypatch, user_a):
    """The payment's transaction is held open after crediting, before it commits; the refund's
    event comes in then. Before the lock, the refund saw no purchase (not committed yet), was kept
    as pending, and the payment's scan for pending refunds had already run: the buyer kept the
    money and the credits."""
    secret = "whsec_race"
    settings.STRIPE_SECRET_KEY, settings.STRIPE_WEBHOOK_SECRET = "sk_test_race", secret
    monkeypatch.setattr(stripe_gateway, "http_client", FakeStripeHttp())
    pack = CreditPack.objects.create(name="Race", credits=Decimal("100.00"), price=Decimal("9.99"), currency="USD")
    session = payments.checkout_start(user=user_a, pack=pack, success_url="https://x/ok", cancel_url="https://x/c").session
    paid = {"id": "evt_paid", "type": "checkout.session.completed", "data": {"object": {
        "id": session.stripe_session_id, "payment_status": "paid", "payment_intent": "pi_race", "amount_total": 999}}}
    refund = {"id": "evt_refund", "type": "charge.refunded", "data": {"object": {
        "id": "ch_race", "payment_intent": "pi_race", "amount": 999, "amount_refunded": 999, "refunded": True}}}

    credited, refund_done = threading.Event(), threading.Event()
    apply = payments._apply

    def apply_then_hold(event):
        outcome = apply(event)
        if event["id"] == "evt_paid":
            credited.set()
            # Keep the payment's transaction open until the refund has been handled or waits for it.
            deadline = time.monotonic() + 30
            while not refund_done.is_set() and not _someone_waits_for_an_advisory_lock():
                assert time.monotonic() < deadline, "the refund neither finished nor waited"
                time.sleep(0.01)
        return outcome

    monkeypatch.setattr(payments, "_apply", apply_then_hold)
    errors: list[BaseException] = []

    def deliver(event: dict, done: threading.Event | None = None) -> None:
        try:
            payments.webhook_receive(**_stripe_delivery(event, secret))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            if done is not None:
                done.set()
            connections.close_all()

    paying = threading.Thread(target=deliver, args=(paid,))
    paying.start()
    assert credited.wait(30)
    refunding = threading.Thread(target=deliver, args=(refund, refund_done))
    refunding.start()
    refunding.join(60)
    paying.join(60)
    assert not errors, errors
    assert selectors.account_balance(user=user_a).balance == Decimal("0.00")  # refunded money, no credits
    kinds = sorted(LedgerEntry.objects.filter(account__user=user_a).values_list("kind", flat=True))
    assert kinds == [EntryKind.PURCHASE, EntryKind.REVERSAL]
