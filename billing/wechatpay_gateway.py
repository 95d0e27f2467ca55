"""WeChat Pay (微信支付) API v3 with the `cryptography` package: the Native order (a QR code's
`code_url`), requests signed in the Authorization header with the merchant's key (SHA256withRSA
over `METHOD\\nPATH\\ntimestamp\\nnonce\\nbody\\n`), answers and notifications checked against the
platform certificate (Wechatpay-Signature over `timestamp\\nnonce\\nbody\\n`, Wechatpay-Serial),
and the notification's `resource` decrypted with AES-256-GCM under the APIv3 key."""

from __future__ import annotations

import base64
import json
import secrets
import time
from typing import Any
from urllib.parse import urlsplit

import requests
from cryptography import x509
from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings

from billing.payment_errors import (
    BadSignature,
    PaymentProviderError,
    PaymentsNotConfigured,
    StaleNotification,
)

NATIVE_PATH = "/v3/pay/transactions/native"


def configured() -> bool:
    return all(
        (
            settings.WECHATPAY_MCH_ID,
            settings.WECHATPAY_APP_ID,
            settings.WECHATPAY_MCH_SERIAL_NO,
            settings.WECHATPAY_PRIVATE_KEY,
            settings.WECHATPAY_APIV3_KEY,
            settings.WECHATPAY_PLATFORM_CERT,
        )
    )


def _require() -> None:
    if not configured():
        raise PaymentsNotConfigured("WeChat Pay is not configured on this server.")


def _platform_cert() -> x509.Certificate:
    return x509.load_pem_x509_certificate(settings.WECHATPAY_PLATFORM_CERT.encode())


def _same_serial(header: str, serial: int) -> bool:
    """The header names this serial: compared as numbers, since WeChat Pay writes serials at their
    full width (40 hex digits) and a serial starting with a 0 digit has fewer without it."""
    try:
        return int(header, 16) == serial
    except ValueError:
        return False


def authorization(method: str, path_with_query: str, body: str, *, timestamp: int, nonce: str) -> str:
    message = f"{method}\n{path_with_query}\n{timestamp}\n{nonce}\n{body}\n".encode()
    key = serialization.load_pem_private_key(settings.WECHATPAY_PRIVATE_KEY.encode(), password=None)
    signature = base64.b64encode(key.sign(message, padding.PKCS1v15(), hashes.SHA256())).decode()
    return (
        f'WECHATPAY2-SHA256-RSA2048 mchid="{settings.WECHATPAY_MCH_ID}",nonce_str="{nonce}",'
        f'signature="{signature}",timestamp="{timestamp}",serial_no="{settings.WECHATPAY_MCH_SERIAL_NO}"'
    )


def signature_verify(headers, body: bytes, *, now: float | None = None) -> None:
    """The platform's signature over an answer or a notification, its serial and its age."""
    timestamp = headers.get("Wechatpay-Timestamp", "")
    nonce = headers.get("Wechatpay-Nonce", "")
    signature = headers.get("Wechatpay-Signature", "")
    if not (timestamp.isdigit() and nonce and signature):
        raise BadSignature("The WeChat Pay signature headers are missing.")
    if not _same_serial(headers.get("Wechatpay-Serial", ""), _platform_cert().serial_number):
        raise BadSignature(
            "Signed with a certificate that is not the configured WeChat Pay platform certificate."
        )
    try:
        _platform_cert().public_key().verify(
            base64.b64decode(signature, validate=True),
            f"{timestamp}\n{nonce}\n".encode() + body + b"\n",
            padding.PKCS1v15(),
            hashes.SHA256(),
        )
    except (InvalidSignature, ValueError) as exc:
        raise BadSignature("The Wechatpay-Signature does not match this body.") from exc
    if abs((now or time.time()) - int(timestamp)) > settings.PAYMENT_NOTIFICATION_MAX_AGE_S:
        raise StaleNotification()


def native_order_create(*, out_trade_no: str, amount_fen: int, description: str, notify_url: str) -> str:
    """POST /v3/pay/transactions/native; the `code_url` the buyer scans with WeChat."""
    _require()
    body = json.dumps(
        {
            "appid": settings.WECHATPAY_APP_ID,
            "mchid": settings.WECHATPAY_MCH_ID,
            "description": description[:127],
            "out_trade_no": out_trade_no,
            "notify_url": notify_url,
            "amount": {"total": amount_fen, "currency": "CNY"},
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )
    url = settings.WECHATPAY_API_BASE.rstrip("/") + NATIVE_PATH
    header = authorization(
        "POST", urlsplit(url).path, body, timestamp=int(time.time()), nonce=secrets.token_hex(16)
    )
    try:
        response = requests.post(
            url,
            data=body.encode(),
            timeout=settings.WECHATPAY_TIMEOUT_S,
            headers={
                "Authorization": header,
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
    except requests.RequestException as exc:
        raise PaymentProviderError() from exc
    if response.status_code != 200:
        raise PaymentProviderError(
            f"WeChat Pay refused the order ({response.status_code}); no payment was made."
        )
    signature_verify(response.headers, response.content)
    code_url = response.json().get("code_url", "")
    if not code_url:
        raise PaymentProviderError()
    return code_url


def notification_open(headers, body: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """The notification and its decrypted resource, once the platform's signature is checked."""
    _require()
    signature_verify(headers, body)
    try:
        notification = json.loads(body)
        resource = notification["resource"]
        if resource.get("algorithm") != "AEAD_AES_256_GCM":
            raise ValueError(resource.get("algorithm"))
        plain = AESGCM(settings.WECHATPAY_APIV3_KEY.encode()).decrypt(
            resource["nonce"].encode(),
            base64.b64decode(resource["ciphertext"]),
            (resource.get("associated_data") or "").encode(),
        )
        return notification, json.loads(plain)
    except (ValueError, KeyError, TypeError, InvalidTag) as exc:
        raise BadSignature(
            "The WeChat Pay notification's resource cannot be decrypted with the APIv3 key."
        ) from exc
