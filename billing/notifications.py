"""Alipay and WeChat Pay notifications: signature-checked by their gateways, then applied to the
purchase with the same exactly-once rules as Stripe's webhook (billing/payments.py):

- every notification id (Alipay's notify_id, WeChat Pay's notification id) is stored with a unique
  constraint (PaymentNotification): a resent or replayed one is answered as received and does
  nothing; one older than 5 minutes is refused by the gateway;
- a paid order is credited by the one PURCHASE entry per purchase reference in the ledger;
- a refund proves the payment it refunds (both carry our out_trade_no, signed), so a refund that
  arrives before the payment's own notification credits the purchase first, then takes back;
- Alipay's refund_fee is the total refunded so far: reversed as a cumulative level; WeChat Pay
  reports each refund (out_refund_no) alone: reversed once per refund, never beyond the purchase.
"""

from __future__ import annotations

import logging
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.translation import gettext_noop

from billing import alipay_gateway, currencies, payments, wechatpay_gateway
from billing.choices import CheckoutStatus, PaymentProvider
from billing.models import CheckoutSession, PaymentNotification

logger = logging.getLogger(__name__)

ALIPAY_PAID = ("TRADE_SUCCESS", "TRADE_FINISHED")


def _first_time(provider: str, notification_id: str, kind: str) -> PaymentNotification | None:
    try:
        with transaction.atomic():
            return PaymentNotification.objects.create(
                provider=provider, notification_id=notification_id, kind=kind
            )
    except IntegrityError:
        return None


def _session(provider: str, reference: str) -> CheckoutSession | None:
    return (
        CheckoutSession.objects.select_for_update()
        .select_related("account")
        .filter(provider=provider, stripe_session_id=reference)
        .first()
    )


def _record(row: PaymentNotification, outcome: str) -> str:
    row.outcome = outcome[:300]
    row.save(update_fields=["outcome"])
    logger.info("%s notification %s %s: %s", row.provider, row.kind, row.notification_id, outcome)
    return outcome


def alipay_notification_receive(*, form: dict[str, str]) -> str:
    params = alipay_gateway.notification_verify(form)
    with transaction.atomic():
        row = _first_time(PaymentProvider.ALIPAY, params["notify_id"], params.get("trade_status", ""))
        if row is None:
            return "duplicate notification: already processed"
        return _record(row, _alipay_apply(params))


def _money(value: str | None) -> Decimal:
    try:
        return Decimal(value or "0")
    except InvalidOperation:
        return Decimal(-1)


def _alipay_apply(params: dict[str, str]) -> str:
    session = _session(PaymentProvider.ALIPAY, params["out_trade_no"])
    if session is None:
        return f"unknown order {params['out_trade_no']}: not ours, nothing credited"
    total = _money(params.get("total_amount"))
    if total != session.price:
        return f"order {session.stripe_session_id}: amount {params.get('total_amount')} differs from the pack"
    status = params.get("trade_status", "")
    refunded = _money(params.get("refund_fee"))
    # TRADE_CLOSED: closed unpaid, or paid and then refunded in full (it carries refund_fee then: only
    # a paid trade is refunded, with or without its gmt_payment in the notification; without one the
    # refund was taken for "closed unpaid" and the buyer kept the credits and the money).
    paid = status in ALIPAY_PAID or (status == "TRADE_CLOSED" and refunded > 0)
    if not paid:
        if status == "TRADE_CLOSED":
            CheckoutSession.objects.filter(pk=session.pk, status=CheckoutStatus.OPEN).update(
                status=CheckoutStatus.EXPIRED
            )
            return f"order {session.stripe_session_id} closed unpaid"
        return f"order {session.stripe_session_id} not paid yet ({status})"
    _, outcome = payments.session_credit(session, payment_id=params.get("trade_no", ""))
    if refunded > 0:
        outcome += "; " + payments.session_reverse_to(
            session, fraction=refunded / total, reason=gettext_noop("Alipay payment refunded")
        )
    return outcome


def wechatpay_notification_receive(*, headers, body: bytes) -> str:
    notification, resource = wechatpay_gateway.notification_open(headers, body)
    with transaction.atomic():
        row = _first_time(
            PaymentProvider.WECHATPAY, str(notification.get("id", "")), notification.get("event_type", "")
        )
        if row is None:
            return "duplicate notification: already processed"
        return _record(row, _wechatpay_apply(notification.get("event_type", ""), resource))


def _wechatpay_apply(event_type: str, resource: dict) -> str:
    if resource.get("mchid") not in (None, settings.WECHATPAY_MCH_ID):
        return f"notification for merchant {resource.get('mchid')}: not ours"
    session = _session(PaymentProvider.WECHATPAY, str(resource.get("out_trade_no", "")))
    if session is None:
        return f"unknown order {resource.get('out_trade_no')}: not ours, nothing credited"
    amount = resource.get("amount") or {}
    price_fen = currencies.minor_amount(session.price, session.currency)  # CNY: fen
    if int(amount.get("total", -1)) != price_fen:
        return f"order {session.stripe_session_id}: amount {amount.get('total')} differs from the pack"
    # A payment says its currency (a refund does not): 6800 of another currency is not the 68.00 CNY
    # the pack costs (a cross-border or misconfigured merchant account).
    if str(amount.get("currency") or session.currency).upper() != session.currency.upper():
        return f"order {session.stripe_session_id}: paid in {amount.get('currency')}, not {session.currency.upper()}"
    payment_id = str(resource.get("transaction_id", ""))
    if event_type == "TRANSACTION.SUCCESS":
        if resource.get("trade_state") != "SUCCESS":
            return f"order {session.stripe_session_id} not paid ({resource.get('trade_state')})"
        return payments.session_credit(session, payment_id=payment_id)[1]
    if event_type == "REFUND.SUCCESS" and resource.get("refund_status") == "SUCCESS":
        _, outcome = payments.session_credit(session, payment_id=payment_id)
        fraction = Decimal(int(amount.get("refund", 0))) / Decimal(price_fen)
        return (
            outcome
            + "; "
            + payments.session_reverse_part(
                session,
                part=str(resource.get("out_refund_no", "")),
                fraction=fraction,
                reason=gettext_noop("WeChat Pay payment refunded"),
            )
        )
    return f"ignored {event_type}"
