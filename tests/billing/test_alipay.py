"""Buying credits with Alipay: page/app pay orders signed with the app's RSA2 key (checked with its
public key), and the asynchronous notification signed as Alipay signs it — valid, forged,
replayed, stale, duplicated, out of order, partial and full refunds — with the ledger's
invariants after each case. Keys are made by the test; nothing reaches Alipay."""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import parse_qsl, urlsplit

import pytest
from rest_framework.test import APIClient

from billing import selectors
from billing.choices import CheckoutStatus, EntryKind
from billing.models import Account, CheckoutSession, CreditPack, LedgerEntry, PaymentNotification
from tests.helpers.cn_payments import AlipayKeys, private_pem, public_pem, rsa_key, rsa_verify
from tests.helpers.ledger_checks import invariants

pytestmark = pytest.mark.django_db

NOTIFY = "/api/v1/billing/alipay/notify"


@pytest.fixture
def alipay(settings) -> AlipayKeys:
    keys = AlipayKeys()
    settings.ALIPAY_APP_ID = keys.app_id
    settings.ALIPAY_PRIVATE_KEY = private_pem(keys.app_key)
    # As Alipay's console shows it: bare base64, no PEM armour.
    settings.ALIPAY_PUBLIC_KEY = "".join(public_pem(keys.alipay_key).splitlines()[1:-1])
    return keys


@pytest.fixture
def cny_pack(db):
    return CreditPack.objects.create(
        name="入门包", credits=Decimal("100.00"), price=Decimal("68.00"), currency="CNY"
    )


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def start(user, pack, channel: str = "page") -> dict:
    response = api(user).post(
        "/api/v1/billing/checkout",
        {"pack_id": pack.id, "provider": "alipay", "channel": channel},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def notify(form: dict):
    return APIClient().post(NOTIFY, data=form)  # form-encoded, as Alipay posts


def paid(keys: AlipayKeys, order: str, **extra: str) -> dict:
    fields = {
        "out_trade_no": order,
        "trade_status": "TRADE_SUCCESS",
        "total_amount": "68.00",
        "gmt_payment": "2025-09-01 10:00:00",
    }
    return keys.notification(**{**fields, **extra})


def balance(user) -> Decimal:
    return selectors.account_balance(user=user).balance


def test_page_pay_url_is_a_signed_request_alipay_accepts(alipay, cny_pack, user_a):
    body = start(user_a, cny_pack)
    assert body["provider"] == "alipay" and body["code_url"] == "" and body["order_string"] == ""
    url = urlsplit(body["url"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == "https://openapi.alipay.com/gateway.do"
    params = dict(parse_qsl(url.query))
    assert params["method"] == "alipay.trade.page.pay" and params["sign_type"] == "RSA2"
    assert params["app_id"] == alipay.app_id
    assert params["notify_url"] == "http://testserver/api/v1/billing/alipay/notify"
    assert params["return_url"] == f"http://testserver/account/credits/success/?session_id={body['id']}"
    content = "&".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "sign")
    rsa_verify(alipay.app_key.public_key(), params["sign"], content.encode())  # raises if not ours
    assert '"total_amount":"68.00"' in params["biz_content"] and body["id"] in params["biz_content"]
    session = CheckoutSession.objects.get(stripe_session_id=body["id"])
    assert session.provider == "alipay" and session.status == CheckoutStatus.OPEN


def test_app_pay_returns_the_signed_order_string(alipay, cny_pack, user_a):
    body = start(user_a, cny_pack, channel="app")
    params = dict(parse_qsl(body["order_string"]))
    assert body["url"] == "" and params["method"] == "alipay.trade.app.pay"
    content = "&".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "sign")
    rsa_verify(alipay.app_key.public_key(), params["sign"], content.encode())


def test_a_paid_notification_credits_once_across_resends_and_statuses(alipay, cny_pack, user_a):
    order = start(user_a, cny_pack)["id"]
    first = paid(alipay, order)
    response = notify(first)
    assert response.status_code == 200 and response.content == b"success"
    assert balance(user_a) == Decimal("100.00")
    assert notify(first).content == b"success"  # Alipay resends until it reads "success"
    assert notify(paid(alipay, order)).status_code == 200  # another notify_id, same payment
    assert notify(paid(alipay, order, trade_status="TRADE_FINISHED")).status_code == 200
    assert balance(user_a) == Decimal("100.00")
    assert LedgerEntry.objects.filter(kind=EntryKind.PURCHASE, payment_ref=order).count() == 1
    assert CheckoutSession.objects.get(stripe_session_id=order).status == CheckoutStatus.PAID
    invariants(user_a)


@pytest.mark.parametrize(
    "forge",
    [
        lambda keys, form: keys.notification(key=rsa_key(), **form),  # signed by someone else
        lambda keys, form: {**keys.notification(**form), "total_amount": "0.01"},  # altered after signing
        lambda keys, form: {**keys.notification(**form), "sign_type": "RSA"},
        lambda keys, form: {k: v for k, v in keys.notification(**form).items() if k != "sign"},
        lambda keys, form: {**keys.notification(**form), "sign": "bm90IGEgc2lnbmF0dXJl"},
    ],
    ids=["other-key", "tampered", "rsa1", "unsigned", "garbage"],
)
def test_forged_notifications_are_refused(alipay, cny_pack, user_a, forge):
    order = start(user_a, cny_pack)["id"]
    form = {"out_trade_no": order, "trade_status": "TRADE_SUCCESS", "total_amount": "68.00"}
    response = notify(forge(alipay, form))
    assert response.status_code == 400 and response.json()["code"] == "bad_signature"
    assert balance(user_a) == 0 and not PaymentNotification.objects.exists()


def test_a_notification_for_another_app_is_refused(alipay, cny_pack, user_a, settings):
    order = start(user_a, cny_pack)["id"]
    form = paid(alipay, order, app_id="2021000000000999")
    assert notify(form).status_code == 400 and balance(user_a) == 0


def test_stale_and_replayed_notifications_are_refused(alipay, cny_pack, user_a):
    order = start(user_a, cny_pack)["id"]
    stale = alipay.notification(
        age_s=301, out_trade_no=order, trade_status="TRADE_SUCCESS", total_amount="68.00"
    )
    response = notify(stale)
    assert response.status_code == 400 and response.json()["code"] == "stale_notification"
    assert balance(user_a) == 0
    # A captured refund notification replayed later: stale, refused; replayed at once: a no-op.
    assert notify(paid(alipay, order)).status_code == 200
    refund = paid(alipay, order, refund_fee="34.00")
    assert notify(refund).status_code == 200 and notify(refund).status_code == 200
    assert balance(user_a) == Decimal("50.00")
    invariants(user_a)


def test_an_amount_that_differs_from_the_pack_credits_nothing(alipay, cny_pack, user_a):
    order = start(user_a, cny_pack)["id"]
    assert notify(paid(alipay, order, total_amount="0.01")).status_code == 200
    assert balance(user_a) == 0


def test_partial_refunds_take_back_cumulatively_in_any_order(alipay, cny_pack, user_a):
    order = start(user_a, cny_pack)["id"]
    # The 25 % refund's notification arrives before the payment's own: it proves the payment.
    assert notify(paid(alipay, order, refund_fee="17.00")).status_code == 200
    assert balance(user_a) == Decimal("75.00")
    assert notify(paid(alipay, order)).status_code == 200  # the payment, late: credited already
    assert balance(user_a) == Decimal("75.00")
    assert notify(paid(alipay, order, refund_fee="51.00")).status_code == 200  # 75 % in all
    assert balance(user_a) == Decimal("25.00")
    assert notify(paid(alipay, order, refund_fee="34.00")).status_code == 200  # a lower level, late
    assert balance(user_a) == Decimal("25.00")
    full = paid(alipay, order, trade_status="TRADE_CLOSED", refund_fee="68.00")
    assert notify(full).status_code == 200
    assert balance(user_a) == 0
    assert CheckoutSession.objects.get(stripe_session_id=order).status == CheckoutStatus.REVERSED
    assert Account.objects.get(user=user_a).flagged_at is not None
    invariants(user_a)


def test_an_order_closed_unpaid_expires_and_credits_nothing(alipay, cny_pack, user_a):
    order = start(user_a, cny_pack)["id"]
    closed = alipay.notification(out_trade_no=order, trade_status="TRADE_CLOSED", total_amount="68.00")
    assert notify(closed).status_code == 200
    assert balance(user_a) == 0
    assert CheckoutSession.objects.get(stripe_session_id=order).status == CheckoutStatus.EXPIRED


def test_alipay_is_off_unless_configured_and_only_for_cny_packs(settings, cny_pack, user_a, alipay):
    usd = CreditPack.objects.create(
        name="Starter", credits=Decimal("100"), price=Decimal("9.99"), currency="USD"
    )
    response = api(user_a).post(
        "/api/v1/billing/checkout", {"pack_id": usd.id, "provider": "alipay"}, format="json"
    )
    assert response.status_code == 400 and response.json()["code"] == "pack_currency_unsupported"
    settings.ALIPAY_APP_ID = ""
    response = api(user_a).post(
        "/api/v1/billing/checkout", {"pack_id": cny_pack.id, "provider": "alipay"}, format="json"
    )
    assert response.status_code == 503 and response.json()["code"] == "payments_not_configured"
    assert "alipay" not in api(user_a).get("/api/v1/billing/packs").json()["providers"]
    assert notify(paid(alipay, "vsgwhatever")).status_code == 503


def test_the_credits_page_offers_alipay_for_cny_packs_and_sends_the_buyer_to_it(
    alipay, cny_pack, user_a, client
):
    client.force_login(user_a)
    page = client.get("/account/credits/").content.decode()
    assert 'name="provider" value="alipay"' in page and 'value="wechatpay"' not in page
    response = client.post(f"/account/credits/{cny_pack.id}/buy", {"provider": "alipay"})
    assert response.status_code == 302 and response["Location"].startswith(
        "https://openapi.alipay.com/gateway.do?"
    )
    assert CheckoutSession.objects.get(account__user=user_a).provider == "alipay"


# --- found by trying it as a paying user -------------------------------------------------------


def test_alipay_notify_is_processed_whatever_accept_header_it_carries(alipay, cny_pack, user_a):
    """A correctly signed paid notification must be applied and answered with plain `success`
    whatever the notifier's Accept header; DRF's content negotiation answers 406 before the
    handler runs, so nothing is credited and Alipay resends until it gives up."""
    order = start(user_a, cny_pack)["id"]
    response = APIClient().post(
        "/api/v1/billing/alipay/notify", data=paid(alipay, order), HTTP_ACCEPT="text/plain"
    )
    assert response.status_code == 200 and response.content == b"success", response.content
    assert balance(user_a) == Decimal("100.00")


def test_alipay_full_refund_without_gmt_payment_is_still_taken_back(alipay, cny_pack, user_a):
    """TRADE_CLOSED with refund_fee > 0 is a refund (Alipay never refunds an unpaid trade); when
    the notification lacks gmt_payment it is treated as 'closed unpaid' on a PAID order: the
    buyer keeps the credits and the money."""
    order = start(user_a, cny_pack)["id"]
    assert notify(paid(alipay, order)).content == b"success"
    assert balance(user_a) == Decimal("100.00")
    closed = paid(alipay, order, trade_status="TRADE_CLOSED", refund_fee="68.00", gmt_payment="")
    assert notify(closed).content == b"success"
    assert balance(user_a) == 0
    assert CheckoutSession.objects.get(stripe_session_id=order).status == CheckoutStatus.REVERSED
