"""Apple Push Notification service, token-based: an ES256 JWT made from the team's .p8 key (`kid`:
the key id, `iss`: the team id), reused for 50 minutes (Apple refuses one older than an hour and
throttles one renewed more often than every 20), over HTTP/2 (the only protocol APNs speaks).

https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns
"""

from __future__ import annotations

import threading
import time

import httpx
from django.conf import settings
from google.auth import jwt
from google.auth.crypt import ES256Signer

from .errors import PushFailed, PushTokenInvalid

PRODUCTION_URL = "https://api.push.apple.com"
SANDBOX_URL = "https://api.sandbox.push.apple.com"
PROVIDER_TOKEN_TTL_S = 50 * 60
TIMEOUT = httpx.Timeout(10.0, connect=5.0)
# Reasons (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns)
# that say the device token will never work for this app.
DEAD_TOKEN_REASONS = {"BadDeviceToken", "DeviceTokenNotForTopic", "Unregistered"}
STALE_PROVIDER_TOKEN_REASONS = {"ExpiredProviderToken", "InvalidProviderToken"}

_lock = threading.Lock()
_state: dict = {}  # the provider token, when it was made, and the HTTP/2 client


def enabled() -> bool:
    return bool(settings.APNS_KEY)


def base_url() -> str:
    return settings.APNS_URL or (SANDBOX_URL if settings.APNS_USE_SANDBOX else PRODUCTION_URL)


def _client() -> httpx.Client:
    """One HTTP/2 connection per process, reused (Apple asks providers to keep it open). http1=False:
    HTTP/2 only, by ALPN over TLS, or with prior knowledge on a plain http:// stand-in."""
    with _lock:
        if _state.get("client") is None:
            _state["client"] = httpx.Client(http1=False, http2=True, timeout=TIMEOUT)
        return _state["client"]


def provider_token(*, now: float | None = None) -> str:
    now = time.time() if now is None else now
    key = (settings.APNS_KEY, settings.APNS_KEY_ID, settings.APNS_TEAM_ID)
    with _lock:
        if _state.get("key") != key or now - _state.get("issued_at", 0) >= PROVIDER_TOKEN_TTL_S:
            signer = ES256Signer.from_string(settings.APNS_KEY, key_id=settings.APNS_KEY_ID)
            token = jwt.encode(signer, {"iss": settings.APNS_TEAM_ID, "iat": int(now)}).decode()
            _state.update(key=key, token=token, issued_at=now)
        return _state["token"]


def _forget_provider_token() -> None:
    with _lock:
        _state.pop("issued_at", None)


def send(*, token: str, topic: str, title: str, body: str, data: dict[str, str], collapse_id: str,
         push_id: str) -> None:
    """One alert to one device token. `collapse_id` (the job id) makes a repeated delivery replace the
    first in Notification Center; `push_id` (a UUID) names it in Apple's feedback."""
    headers = {
        "authorization": f"bearer {provider_token()}",
        "apns-topic": topic,
        "apns-push-type": "alert",
        "apns-priority": "10",
        "apns-expiration": str(int(time.time()) + 86400),  # a phone off for a day does not need it any more
        "apns-collapse-id": collapse_id,
        "apns-id": push_id,
    }
    payload = {"aps": {"alert": {"title": title, "body": body}, "sound": "default"}, **data}
    try:
        response = _client().post(f"{base_url()}/3/device/{token}", json=payload, headers=headers)
    except httpx.HTTPError as exc:
        raise PushFailed(f"APNs unreachable: {type(exc).__name__}: {exc}") from exc
    if response.status_code == 200:
        return
    try:
        reason = str(response.json().get("reason", ""))
    except ValueError:
        reason = response.text[:200]
    if response.status_code == 410 or reason in DEAD_TOKEN_REASONS:
        raise PushTokenInvalid(f"APNs {response.status_code} {reason}")
    if reason in STALE_PROVIDER_TOKEN_REASONS:
        _forget_provider_token()  # the next try signs a new one
    raise PushFailed(f"APNs answered {response.status_code} {reason}")
