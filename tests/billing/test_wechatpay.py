"""Buying credits with WeChat Pay API v3: the Native order through a stand-in API server that
checks the merchant's signed Authorization header and signs its answer with the platform key,
and notifications encrypted (AES-256-GCM, APIv3 key) and signed as WeChat Pay sends them — valid,
forged, wrong serial, undecryptable, replayed, stale, out of order, partial refunds — with the
ledger's invariants after each case. Keys and the certificate are made by the test."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import cv2
import numpy as np
import pytest
from rest_framework.test import APIClient

from billing import selectors
from billing.choices import CheckoutStatus, EntryKind
from billing.models import CheckoutSession, CreditPack, LedgerEntry, PaymentNotification
from tests.helpers.cn_payments import WeChatPayKeys, WeChatPayStandIn, private_pem, rsa_key
from tests.helpers.ledger_checks import invariants

pytestmark = pytest.mark.django_db

NOTIFY = "/api/v1/billing/wechatpay/notify"


@pytest.fixture
def wechatpay(settings):
    keys = WeChatPayKeys()
    stand_in = WeChatPayStandIn(keys)
    server = stand_in.serve()
    settings.WECHATPAY_MCH_ID = keys.mch_id
    settings.WECHATPAY_APP_ID = keys.app_id
    settings.WECHATPAY_MCH_SERIAL_NO = keys.mch_serial
    settings.WECHATPAY_PRIVATE_KEY = private_pem(keys.mch_key)
    settings.WECHATPAY_APIV3_KEY = keys.apiv3_key
    settings.WECHATPAY_PLATFORM_CERT = keys.platform_cert_pem
    settings.WECHATPAY_API_BASE = f"http://127.0.0.1:{server.server_address[1]}"
    yield keys, stand_in
    server.shutdown()


@pytest.fixture
def cny_pack(db):
    return CreditPack.objects.create(
        name="入门包", credits=Decimal("100.00"), price=Decimal("68.00"), currency="CNY"
    )


def start(user, pack) -> dict:
    client = APIClient()
    client.force_authenticate(user)
    response = client.post(
        "/api/v1/billing/checkout", {"pack_id": pack.id, "provider": "wechatpay"}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()


def post(body: bytes, headers: dict):
    extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()}
    return APIClient().post(NOTIFY, data=body, content_type="application/json", **extra)


def transaction(keys: WeChatPayKeys, order: str, *, total: int = 6800, state: str = "SUCCESS") -> dict:
    return {
        "appid": keys.app_id,
        "mchid": keys.mch_id,
        "out_trade_no": order,
        "transaction_id": "4200000000202509010001",
        "trade_type": "NATIVE",
        "trade_state": state,
        "payer": {"openid": "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"},
        "amount": {"total": total, "payer_total": total, "currency": "CNY", "payer_currency": "CNY"},
    }


def refund(keys: WeChatPayKeys, order: str, *, refund_no: str, amount: int) -> dict:
    return {
        "mchid": keys.mch_id,
        "out_trade_no": order,
        "transaction_id": "4200000000202509010001",
        "out_refund_no": refund_no,
        "refund_id": f"5030{refund_no}",
        "refund_status": "SUCCESS",
        "amount": {"total": 6800, "refund": amount, "payer_total": 6800, "payer_refund": amount},
    }


def send(keys: WeChatPayKeys, event_type: str, resource: dict, **sign):
    body = keys.notification(event_type, resource)
    return post(body, keys.signed_headers(body, **sign))


def balance(user) -> Decimal:
    return selectors.account_balance(user=user).balance


def test_native_order_is_signed_and_gives_the_code_url(wechatpay, cny_pack, user_a):
    keys, stand_in = wechatpay
    body = start(user_a, cny_pack)
    assert body["provider"] == "wechatpay" and body["code_url"].startswith("weixin://wxpay/bizpayurl?pr=")
    assert body["url"] == ""
    (order,) = stand_in.orders  # the stand-in answered only because the Authorization header verified
    assert order["out_trade_no"] == body["id"] and order["amount"] == {"total": 6800, "currency": "CNY"}
    assert order["mchid"] == keys.mch_id and order["appid"] == keys.app_id
    assert order["notify_url"] == "http://testserver/api/v1/billing/wechatpay/notify"
    assert CheckoutSession.objects.get(stripe_session_id=body["id"]).provider == "wechatpay"


def test_an_order_signed_with_another_key_is_refused_by_the_server(wechatpay, cny_pack, user_a, settings):
    settings.WECHATPAY_PRIVATE_KEY = private_pem(rsa_key())
    client = APIClient()
    client.force_authenticate(user_a)
    response = client.post(
        "/api/v1/billing/checkout", {"pack_id": cny_pack.id, "provider": "wechatpay"}, format="json"
    )
    assert response.status_code == 502 and response.json()["code"] == "payment_provider_error"
    assert not CheckoutSession.objects.exists()


def test_a_paid_notification_credits_once_across_resends(wechatpay, cny_pack, user_a):
    keys, _ = wechatpay
    order = start(user_a, cny_pack)["id"]
    body = keys.notification("TRANSACTION.SUCCESS", transaction(keys, order))
    response = post(body, keys.signed_headers(body))
    assert response.status_code == 200 and response.json()["code"] == "SUCCESS"
    assert post(body, keys.signed_headers(body)).status_code == 200  # resent: same id, re-signed
    assert send(keys, "TRANSACTION.SUCCESS", transaction(keys, order)).status_code == 200  # another id
    assert balance(user_a) == Decimal("100.00")
    assert LedgerEntry.objects.filter(kind=EntryKind.PURCHASE, payment_ref=order).count() == 1
    assert CheckoutSession.objects.get(stripe_session_id=order).status == CheckoutStatus.PAID
    invariants(user_a)


@pytest.mark.parametrize("width", ["040X", "040x"])
def test_the_platform_serial_is_matched_at_full_width(wechatpay, cny_pack, user_a, width):
    """WeChat Pay writes certificate serials at 40 hex digits: one whose first digit is 0 matched
    no serial we printed without it, and every notification signed with it was refused."""
    keys, _ = wechatpay
    order = start(user_a, cny_pack)["id"]
    body = keys.notification("TRANSACTION.SUCCESS", transaction(keys, order))
    serial = format(keys.platform_serial, width)
    assert serial.startswith("0")  # 121-bit serials: 31 digits, padded
    assert post(body, keys.signed_headers(body, serial=serial)).status_code == 200
    assert balance(user_a) == Decimal("100.00")


@pytest.mark.parametrize(
    "case", ["other-key", "wrong-serial", "tampered-body", "wrong-apiv3-key", "no-headers"]
)
def test_forged_notifications_are_refused(wechatpay, cny_pack, user_a, case):
    keys, _ = wechatpay
    order = start(user_a, cny_pack)["id"]
    body = keys.notification("TRANSACTION.SUCCESS", transaction(keys, order))
    headers = keys.signed_headers(body)
    if case == "other-key":
        headers = keys.signed_headers(body, key=rsa_key())
    elif case == "wrong-serial":
        headers = keys.signed_headers(body, serial="1234ABCD")
    elif case == "tampered-body":
        tampered = json.loads(body)
        tampered["event_type"] = "REFUND.SUCCESS"
        body = json.dumps(tampered).encode()
    elif case == "wrong-apiv3-key":
        body = keys.notification("TRANSACTION.SUCCESS", transaction(keys, order), apiv3_key="x" * 32)
        headers = keys.signed_headers(body)
    else:
        headers = {}
    response = post(body, headers)
    assert response.status_code == 400 and response.json()["code"] == "bad_signature"
    assert balance(user_a) == 0 and not PaymentNotification.objects.exists()


def test_stale_notifications_are_refused(wechatpay, cny_pack, user_a):
    keys, _ = wechatpay
    order = start(user_a, cny_pack)["id"]
    response = send(keys, "TRANSACTION.SUCCESS", transaction(keys, order), age_s=301)
    assert response.status_code == 400 and response.json()["code"] == "stale_notification"
    assert balance(user_a) == 0


def test_amount_or_merchant_that_differs_credits_nothing(wechatpay, cny_pack, user_a):
    keys, _ = wechatpay
    order = start(user_a, cny_pack)["id"]
    assert send(keys, "TRANSACTION.SUCCESS", transaction(keys, order, total=1)).status_code == 200
    other = {**transaction(keys, order), "mchid": "1900000999"}
    assert send(keys, "TRANSACTION.SUCCESS", other).status_code == 200
    assert send(keys, "TRANSACTION.SUCCESS", transaction(keys, order, state="NOTPAY")).status_code == 200
    assert balance(user_a) == 0


def test_refunds_take_back_each_refund_once_in_any_order(wechatpay, cny_pack, user_a):
    keys, _ = wechatpay
    order = start(user_a, cny_pack)["id"]
    # A 25 % refund reported before the payment's own notification: it proves the payment.
    first = keys.notification("REFUND.SUCCESS", refund(keys, order, refund_no="R1", amount=1700))
    assert post(first, keys.signed_headers(first)).status_code == 200
    assert balance(user_a) == Decimal("75.00")
    assert send(keys, "TRANSACTION.SUCCESS", transaction(keys, order)).status_code == 200
    assert balance(user_a) == Decimal("75.00")
    assert post(first, keys.signed_headers(first)).status_code == 200  # resent
    assert send(keys, "REFUND.SUCCESS", refund(keys, order, refund_no="R1", amount=1700)).status_code == 200
    assert balance(user_a) == Decimal("75.00")  # the same refund under another notification id
    assert send(keys, "REFUND.SUCCESS", refund(keys, order, refund_no="R2", amount=3400)).status_code == 200
    assert balance(user_a) == Decimal("25.00")
    # More than is left (a provider error or a forged amount) takes back only what remains.
    assert send(keys, "REFUND.SUCCESS", refund(keys, order, refund_no="R3", amount=6800)).status_code == 200
    assert balance(user_a) == 0
    assert CheckoutSession.objects.get(stripe_session_id=order).status == CheckoutStatus.REVERSED
    invariants(user_a)


def test_wechatpay_is_off_unless_configured(settings, cny_pack, user_a):
    client = APIClient()
    client.force_authenticate(user_a)
    response = client.post(
        "/api/v1/billing/checkout", {"pack_id": cny_pack.id, "provider": "wechatpay"}, format="json"
    )
    assert response.status_code == 503 and response.json()["code"] == "payments_not_configured"
    assert client.get("/api/v1/billing/packs").json()["providers"] == []
    assert post(b"{}", {}).status_code == 503
    response = client.post(
        "/api/v1/billing/checkout", {"pack_id": cny_pack.id, "provider": "paypal"}, format="json"
    )
    assert response.status_code == 400


# --- found by trying it as a paying user -------------------------------------------------------


def test_wechatpay_notify_is_processed_whatever_accept_header_it_carries(wechatpay, cny_pack, user_a):
    keys, _ = wechatpay
    order = start(user_a, cny_pack)["id"]
    body = keys.notification("TRANSACTION.SUCCESS", transaction(keys, order))
    response = post(body, {**keys.signed_headers(body), "Accept": "text/plain"})
    assert response.status_code in (200, 204), response.content
    assert balance(user_a) == Decimal("100.00")


def test_wechatpay_payment_in_another_currency_credits_nothing(wechatpay, cny_pack, user_a):
    """The order was for 6800 fen CNY; a notification saying 6800 of another currency is not
    what the pack costs (Stripe's path checks the currency; this one ignores amount.currency)."""
    keys, _ = wechatpay
    order = start(user_a, cny_pack)["id"]
    resource = transaction(keys, order)
    resource["amount"] = {**resource["amount"], "currency": "JPY", "payer_currency": "JPY"}
    assert send(keys, "TRANSACTION.SUCCESS", resource).status_code == 200
    assert balance(user_a) == 0


def test_wechatpay_site_page_shows_a_scannable_qr_code(client, wechatpay, cny_pack, user_a):
    """WeChat Pay Native is paid by scanning code_url as a QR code; the site's page shows only
    the weixin:// link as text, which a desktop browser cannot open and WeChat cannot scan."""
    client.force_login(user_a)
    response = client.post(f"/account/credits/{cny_pack.id}/buy", {"provider": "wechatpay"})
    assert response.status_code == 200
    page = response.content.decode()
    code_url = re.search(r'id="wechatpay-code-url" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    svg = re.search(r'<figure class="payment-code"[^>]*>(.*?)</figure>', page, re.S).group(1)
    assert _scanned(svg) == code_url  # what WeChat's Scan reads is the order's payment link


def _scanned(svg: str) -> str:
    """Read the QR code the way a camera would: the SVG's module squares drawn at 10 px a unit, then
    OpenCV's QR detector."""
    size = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    scale = 10
    image = np.full((round(size * scale), round(size * scale)), 255, np.uint8)
    for x0, y0, x1, y1 in re.findall(r"M([\d.]+),([\d.]+)H([\d.]+)V([\d.]+)H[\d.]+z", svg):
        image[round(float(y0) * scale):round(float(y1) * scale), round(float(x0) * scale):round(float(x1) * scale)] = 0
    text, _, _ = cv2.QRCodeDetector().detectAndDecode(cv2.copyMakeBorder(image, 40, 40, 40, 40, cv2.BORDER_CONSTANT, value=255))
    return text
