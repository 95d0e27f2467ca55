"""Alipay (支付宝) open platform, RSA2 (SHA256withRSA) with the `cryptography` package: signed
order requests for page pay (电脑网站支付, a URL the buyer's browser opens) and app pay (APP支付,
the order string the app hands to the Alipay SDK), and the check of the asynchronous notification
(异步通知) Alipay posts to our notify_url.

Signing content (Alipay's 签名规则): every parameter but `sign` (and, for notifications, `sign_type`)
with a non-empty value, sorted by name, joined as `name=value` with `&`, values not URL-encoded.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from urllib.parse import urlencode

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from django.conf import settings
from django.utils.translation import gettext as _

from billing.payment_errors import BadSignature, PaymentsNotConfigured, StaleNotification

CHINA_TIME = timezone(timedelta(hours=8))  # Alipay's timestamps are Beijing time
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def configured() -> bool:
    return bool(settings.ALIPAY_APP_ID and settings.ALIPAY_PRIVATE_KEY and settings.ALIPAY_PUBLIC_KEY)


def _pem(text: str, kind: str) -> bytes:
    """Alipay's console shows keys as bare base64; PEM files work too."""
    text = text.strip()
    if "-----BEGIN" not in text:
        text = f"-----BEGIN {kind}-----\n{text}\n-----END {kind}-----"
    return text.encode()


def _private_key() -> rsa.RSAPrivateKey:
    return serialization.load_pem_private_key(_pem(settings.ALIPAY_PRIVATE_KEY, "PRIVATE KEY"), password=None)


def _alipay_public_key() -> rsa.RSAPublicKey:
    return serialization.load_pem_public_key(_pem(settings.ALIPAY_PUBLIC_KEY, "PUBLIC KEY"))


def signing_content(params: dict[str, str], *, exclude: tuple[str, ...] = ("sign",)) -> bytes:
    pairs = sorted((k, v) for k, v in params.items() if k not in exclude and v not in ("", None))
    return "&".join(f"{k}={v}" for k, v in pairs).encode()


def _signed(method: str, biz_content: dict, *, notify_url: str, return_url: str = "") -> dict[str, str]:
    if not configured():
        raise PaymentsNotConfigured(_("Alipay is not configured on this server."))
    params = {
        "app_id": settings.ALIPAY_APP_ID,
        "method": method,
        "format": "JSON",
        "charset": "utf-8",
        "sign_type": "RSA2",
        "timestamp": datetime.now(CHINA_TIME).strftime(TIME_FORMAT),
        "version": "1.0",
        "notify_url": notify_url,
        "return_url": return_url,
        "biz_content": json.dumps(biz_content, ensure_ascii=False, separators=(",", ":")),
    }
    params = {k: v for k, v in params.items() if v}
    signature = _private_key().sign(signing_content(params), padding.PKCS1v15(), hashes.SHA256())
    params["sign"] = base64.b64encode(signature).decode()
    return params


def page_pay_url(
    *, out_trade_no: str, amount: Decimal, subject: str, notify_url: str, return_url: str
) -> str:
    """alipay.trade.page.pay: the gateway URL with the signed request; the buyer's browser opens it."""
    params = _signed(
        "alipay.trade.page.pay",
        {
            "out_trade_no": out_trade_no,
            "product_code": "FAST_INSTANT_TRADE_PAY",
            "total_amount": f"{amount:.2f}",
            "subject": subject,
        },
        notify_url=notify_url,
        return_url=return_url,
    )
    return f"{settings.ALIPAY_GATEWAY}?{urlencode(params)}"


def app_pay_order(*, out_trade_no: str, amount: Decimal, subject: str, notify_url: str) -> str:
    """alipay.trade.app.pay: the signed order string the app passes to the Alipay SDK."""
    params = _signed(
        "alipay.trade.app.pay",
        {
            "out_trade_no": out_trade_no,
            "product_code": "QUICK_MSECURITY_PAY",
            "total_amount": f"{amount:.2f}",
            "subject": subject,
        },
        notify_url=notify_url,
    )
    return urlencode(params)


def notification_verify(form: dict[str, str], *, now: datetime | None = None) -> dict[str, str]:
    """The notification's parameters once its RSA2 signature (Alipay's key), app id and age are
    right; BadSignature or StaleNotification otherwise."""
    if not configured():
        raise PaymentsNotConfigured(_("Alipay is not configured on this server."))
    if form.get("sign_type") != "RSA2" or not form.get("sign"):
        raise BadSignature("The Alipay notification is not signed with RSA2.")
    try:
        signature = base64.b64decode(form["sign"], validate=True)
        _alipay_public_key().verify(
            signature,
            signing_content(form, exclude=("sign", "sign_type")),
            padding.PKCS1v15(),
            hashes.SHA256(),
        )
    except (InvalidSignature, ValueError) as exc:
        raise BadSignature("The Alipay notification's signature does not match.") from exc
    if form.get("app_id") != settings.ALIPAY_APP_ID:
        raise BadSignature("The Alipay notification is for another app.")
    try:
        sent = datetime.strptime(form.get("notify_time", ""), TIME_FORMAT).replace(tzinfo=CHINA_TIME)
    except ValueError as exc:
        raise BadSignature("The Alipay notification has no valid notify_time.") from exc
    age_s = ((now or datetime.now(UTC)) - sent).total_seconds()
    if abs(age_s) > settings.PAYMENT_NOTIFICATION_MAX_AGE_S:
        raise StaleNotification()
    if not form.get("notify_id") or not form.get("out_trade_no"):
        raise BadSignature("The Alipay notification has no notify_id or out_trade_no.")
    return form
