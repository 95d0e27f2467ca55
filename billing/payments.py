"""Buying credits: Stripe Checkout in (Alipay and WeChat Pay: billing/notifications.py), the ledger
credited exactly once, refunds/disputes reversed.

Exactly once, whatever Stripe resends or reorders:
- every event id is stored with a unique constraint (StripeEvent): a replay is answered 200 and
  does nothing;
- a paid session is credited by one PURCHASE entry, unique per session id in the ledger, so
  `checkout.session.completed` and `checkout.session.async_payment_succeeded` for one session, or
  two deliveries racing, credit once;
- a refund or dispute that arrives before the payment it reverses is kept (pending) and applied
  when the payment is credited; the two take one lock per payment (`_payment_lock`), so a refund
  that arrives while its payment is being credited waits for it instead of being kept unseen;
- refunds are cumulative: Stripe's `amount_refunded` is the total refunded so far, so each
  `charge.refunded` reverses up to that share of the credits, minus what earlier reversals of the
  session already took. A REVERSAL entry is unique per (session, cumulative level), so a replay of
  one level takes nothing twice, and a lower level arriving after a higher one takes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Q, Sum
from django.utils import timezone
from django.utils.translation import gettext_noop

from billing import currencies, payment_providers, stripe_gateway
from billing.choices import CheckoutStatus, EntryKind, PaymentProvider
from billing.models import Account, CheckoutSession, CreditPack, LedgerEntry, StripeEvent

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StartedPayment:
    session: CheckoutSession
    url: str = ""  # send the buyer here (Stripe Checkout, Alipay page pay)
    code_url: str = ""  # WeChat Pay Native: show it as a QR code the buyer scans
    order_string: str = ""  # Alipay app pay: the app hands it to the Alipay SDK

HANDLED_EVENTS = (
    "checkout.session.completed",
    "checkout.session.async_payment_succeeded",
    "checkout.session.expired",
    "charge.refunded",
    "charge.dispute.created",
)


def packs_active():
    return CreditPack.objects.filter(active=True)


def checkout_start(
    *,
    user,
    pack: CreditPack,
    success_url: str,
    cancel_url: str,
    provider: str = PaymentProvider.STRIPE,
    site_url: str = "",
    channel: str = "page",
) -> StartedPayment:
    """Start buying the pack with the provider and remember the purchase (credited when the
    provider says paid); returns where the buyer pays (a URL, a QR code's URL or an app order).

    `success_url` may contain `{CHECKOUT_SESSION_ID}`, replaced by the purchase's reference;
    `site_url` is the public root the providers post their notifications under.
    """
    if not pack.active:
        raise ValueError("this pack is not for sale")
    chosen = payment_providers.provider_get(provider, pack)
    account, _ = Account.objects.get_or_create(user=user)
    order = chosen.order_create(
        pack=pack,
        account=account,
        customer_email=getattr(user, "email", "") or "",
        success_url=success_url,
        cancel_url=cancel_url,
        site_url=site_url,
        channel=channel,
    )
    session = CheckoutSession.objects.create(
        stripe_session_id=order.reference,
        provider=chosen.name,
        account=account,
        pack=pack,
        credits=pack.credits,
        price=pack.price,
        currency=pack.currency,
    )
    return StartedPayment(session=session, url=order.url, code_url=order.code_url, order_string=order.order_string)


def webhook_receive(*, payload: bytes, signature: str) -> str:
    """Verify and apply one Stripe event; returns what was done (also stored on the event row)."""
    event = stripe_gateway.event_verify(payload=payload, signature=signature)
    with transaction.atomic():
        try:
            with transaction.atomic():
                row = StripeEvent.objects.create(
                    event_id=event["id"], type=event["type"], livemode=bool(event.get("livemode"))
                )
        except IntegrityError:
            return "duplicate event: already processed"
        outcome = _apply(event)
        row.outcome = outcome[:300]
        row.save(update_fields=["outcome"])
    logger.info("stripe event %s %s: %s", event["type"], event["id"], outcome)
    return outcome


def _apply(event: dict[str, Any]) -> str:
    kind = event["type"]
    obj = (event.get("data") or {}).get("object") or {}
    if kind in ("checkout.session.completed", "checkout.session.async_payment_succeeded"):
        if obj.get("payment_status") not in ("paid", "no_payment_required"):
            return f"session {obj.get('id')} not paid yet ({obj.get('payment_status')})"
        return _credit_session(obj)
    if kind == "checkout.session.expired":
        updated = CheckoutSession.objects.filter(
            stripe_session_id=obj.get("id"), status=CheckoutStatus.OPEN
        ).update(status=CheckoutStatus.EXPIRED)
        return "session expired" if updated else "expired: nothing to do"
    if kind == "charge.refunded":
        return _reverse(obj, reason=gettext_noop("card payment refunded"), fraction=_refunded_fraction(obj), event=event)
    if kind == "charge.dispute.created":
        return _reverse(obj, reason=gettext_noop("card payment disputed"), fraction=Decimal(1), event=event)
    return f"ignored {kind}"


def _payment_id(obj: dict[str, Any]) -> str:
    """The PaymentIntent id a session or charge names (expanded or not)."""
    payment_intent = obj.get("payment_intent") or ""
    if isinstance(payment_intent, dict):
        payment_intent = payment_intent.get("id", "")
    return str(payment_intent)


def _payment_lock(payment_intent: str) -> None:
    """Serialise the events of one payment until the transaction ends. The payment's event and
    its refund's look up different rows (the session by its id; the session by its payment id,
    which the payment's event writes): without this, a refund arriving while the payment's
    transaction is still open sees no purchase, is kept as pending, and the payment's scan for
    pending refunds (made before that commit) misses it: the buyer keeps the credits and the money.
    PostgreSQL: an advisory lock on the payment id. SQLite: its transactions already run one
    writer at a time (transaction_mode IMMEDIATE in settings)."""
    if payment_intent and connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"stripe:{payment_intent}"])


def _credit_session(obj: dict[str, Any]) -> str:
    payment_intent = _payment_id(obj)
    _payment_lock(payment_intent)
    session = CheckoutSession.objects.select_for_update().filter(stripe_session_id=obj.get("id")).first()
    if session is None:
        return f"unknown session {obj.get('id')}: not ours, nothing credited"
    amount, currency = _amount_charged(obj)
    expected = currencies.minor_amount(session.price, session.currency)
    if (amount is not None and amount != expected) or (currency and currency != session.currency.lower()):
        # Paid but not what the pack costs: a person must look (the event's outcome, in the admin).
        logger.error(
            "stripe session %s paid %s %s, the pack costs %s %s: not credited",
            session.stripe_session_id, amount, currency, expected, session.currency,
        )
        return (
            f"session {session.stripe_session_id}: paid {amount} {currency}, the pack costs {expected} "
            f"{session.currency.lower()}; not credited"
        )
    credited, outcome = session_credit(session, payment_id=payment_intent)
    if not credited:
        return outcome
    # A refund or dispute that arrived first (events are not ordered) is applied now.
    for pending in StripeEvent.objects.filter(pending_payment_intent=payment_intent).exclude(
        pending_payment_intent=""
    ):
        outcome += "; " + _reverse(
            pending.pending_object, reason=pending.pending_reason, fraction=Decimal(pending.pending_fraction)
        )
        StripeEvent.objects.filter(pk=pending.pk).update(pending_payment_intent="")
    return outcome


def _amount_charged(session: dict[str, Any]) -> tuple[int | None, str]:
    """What the session charged, in the currency it was created in (minor units, lower-case code).
    With Adaptive Pricing the buyer may pay in their own currency: since API version 2025-03-31
    `amount_total`/`currency` stay in ours (the buyer's are in `presentment_details`); events of an
    endpoint on an older API version carry the buyer's there and ours in `currency_conversion`."""
    conversion = session.get("currency_conversion") or {}
    if conversion.get("source_currency"):
        return int(conversion["amount_total"]), str(conversion["source_currency"]).lower()
    amount = session.get("amount_total")
    return (None if amount is None else int(amount)), str(session.get("currency") or "").lower()


def _refunded_fraction(charge: dict[str, Any]) -> Decimal:
    amount = int(charge.get("amount") or 0)
    refunded = int(charge.get("amount_refunded") or 0)
    if charge.get("refunded") or amount <= 0:
        return Decimal(1)
    return min(Decimal(1), Decimal(refunded) / Decimal(amount))


def _reverse(charge: dict[str, Any], *, reason: str, fraction: Decimal, event: dict | None = None) -> str:
    payment_intent = _payment_id(charge)
    _payment_lock(payment_intent)
    session = (
        CheckoutSession.objects.select_for_update()
        .select_related("account")
        .filter(payment_intent=payment_intent)
        .exclude(payment_intent="")
        .first()
    )
    if session is None:
        if event is not None and payment_intent:
            # The payment's own event has not arrived yet: keep this one until it does.
            StripeEvent.objects.filter(event_id=event["id"]).update(
                pending_payment_intent=payment_intent,
                pending_object=charge,
                pending_reason=reason,
                pending_fraction=str(fraction),
            )
            return f"{reason}: payment {payment_intent} not credited yet; kept until it is"
        return f"{reason}: no purchase for payment {payment_intent or '?'}"
    return session_reverse_to(session, fraction=fraction, reason=reason)


def session_credit(session: CheckoutSession, *, payment_id: str) -> tuple[bool, str]:
    """The purchase's credits, once: one PURCHASE entry, unique per purchase reference in the
    ledger, whatever the provider resends or reorders. The caller holds the session row's lock."""
    try:
        with transaction.atomic():
            LedgerEntry.objects.create(
                account=session.account,
                kind=EntryKind.PURCHASE,
                amount=session.credits,
                payment_ref=session.stripe_session_id,
                reason=f"bought {session.credits} credits ({session.price} {session.currency})",
                details={"payment_intent": payment_id, "pack_id": session.pack_id, "provider": session.provider},
            )
    except IntegrityError:
        return False, f"session {session.stripe_session_id}: already credited"
    CheckoutSession.objects.filter(pk=session.pk).update(
        status=CheckoutStatus.PAID, paid_at=timezone.now(), payment_intent=payment_id
    )
    return True, f"credited {session.credits} to account {session.account_id}"


def session_reverse_to(session: CheckoutSession, *, fraction: Decimal, reason: str) -> str:
    """Take back credits up to `fraction` of the purchase in all (a cumulative refund level:
    Stripe's amount_refunded, Alipay's refund_fee), minus what earlier reversals already took."""
    target = _share(session, fraction)
    amount = target - _reversed_so_far(session)
    if amount <= 0:
        return f"{reason}: session {session.stripe_session_id} already reversed ({target - amount} of {target} credits)"
    # One entry per cumulative level (the session row is locked by the caller, so levels of one
    # session are applied one at a time; the key makes a replay of a level a no-op).
    return _reversal_write(
        session, amount=amount, key=f"{session.stripe_session_id} to {target}", reason=reason,
        note=f"{target} of {session.credits} in all",
    )


def session_reverse_part(session: CheckoutSession, *, part: str, fraction: Decimal, reason: str) -> str:
    """Take back one refund of several (WeChat Pay reports each refund, `out_refund_no`, alone):
    its share, once per part, never more than what is left of the purchase."""
    amount = min(_share(session, fraction), session.credits - _reversed_so_far(session))
    if amount <= 0:
        return f"{reason}: session {session.stripe_session_id} already reversed in full"
    return _reversal_write(
        session, amount=amount, key=f"{session.stripe_session_id} part {part}", reason=reason, note=f"refund {part}"
    )


def _share(session: CheckoutSession, fraction: Decimal) -> Decimal:
    return (session.credits * min(Decimal(1), fraction)).quantize(Decimal("0.01"), ROUND_HALF_UP)


def _reversal_write(session: CheckoutSession, *, amount: Decimal, key: str, reason: str, note: str) -> str:
    try:
        with transaction.atomic():
            LedgerEntry.objects.create(
                account=session.account,
                kind=EntryKind.REVERSAL,
                amount=amount,
                payment_ref=key,
                reason=f"{reason}: {amount} credits taken back ({note})",
            )
    except IntegrityError:
        return f"{reason}: session {session.stripe_session_id} already reversed ({key})"
    now = timezone.now()
    CheckoutSession.objects.filter(pk=session.pk).update(status=CheckoutStatus.REVERSED, reversed_at=now)
    Account.objects.filter(pk=session.account_id).update(
        flagged_at=now, flag_reason=f"{reason} (checkout {session.stripe_session_id})"[:500]
    )
    return f"{reason}: reversed {amount} credits, account {session.account_id} flagged"


def _reversed_so_far(session: CheckoutSession) -> Decimal:
    """Credits already taken back for the session: its levels (`<ref> to <level>`) and parts
    (`<ref> part <refund>`); entries written before reversals were cumulative carry the bare ref."""
    sid = session.stripe_session_id
    return LedgerEntry.objects.filter(
        Q(payment_ref=sid) | Q(payment_ref__startswith=f"{sid} to ") | Q(payment_ref__startswith=f"{sid} part "),
        kind=EntryKind.REVERSAL
    ).aggregate(total=Sum("amount"))["total"] or Decimal(0)
