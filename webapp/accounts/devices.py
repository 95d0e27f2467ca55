"""Tokens for apps, bound to a named device: a short-lived access token and a refresh token that
is used once (each refresh answers a new pair). A refresh token presented again after it was
rotated means two parties hold it (a stolen copy, or a leaked backup): the device is signed out,
every token of its chain with it (OAuth 2.0 Security BCP, refresh-token rotation with reuse
detection). Opaque random keys, only their SHA-256 stored, checked in the database on every use,
so "sign out this device" takes effect on the next request.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from .models import DeviceToken, SignedInDevice

ACCESS_PREFIX = "vsa_"
REFRESH_PREFIX = "vsr_"
CLIENTS = ("mobile", "web")
TOUCH_EVERY_S = 60
_touched: dict[int, float] = {}


class RefreshRefused(Exception):
    """The refresh token cannot be exchanged; `code` says why (problem code of the 401)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class TokenPair:
    device: SignedInDevice
    access_token: str
    refresh_token: str
    access_expires_in_s: int
    refresh_expires_in_s: int


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _issue_pair(device: SignedInDevice) -> TokenPair:
    now = timezone.now()
    access = f"{ACCESS_PREFIX}{secrets.token_urlsafe(32)}"
    refresh = f"{REFRESH_PREFIX}{secrets.token_urlsafe(32)}"
    access_s, refresh_s = settings.ACCESS_TOKEN_TTL_S, settings.REFRESH_TOKEN_TTL_S
    DeviceToken.objects.bulk_create(
        [
            DeviceToken(
                device=device,
                kind=DeviceToken.ACCESS,
                key_sha256=_digest(access),
                expires_at=now + timedelta(seconds=access_s),
            ),
            DeviceToken(
                device=device,
                kind=DeviceToken.REFRESH,
                key_sha256=_digest(refresh),
                expires_at=now + timedelta(seconds=refresh_s),
            ),
        ]
    )
    return TokenPair(device, access, refresh, access_s, refresh_s)


def device_sign_in(*, user, device_name: str, client: str = "mobile") -> TokenPair:
    """A new signed-in device for the user (who has just given their password) and its first pair."""
    with transaction.atomic():
        device = SignedInDevice.objects.create(owner=user, name=device_name[:100], client=client)
        return _issue_pair(device)


def device_refresh(*, refresh_token: str) -> TokenPair:
    """Exchange a refresh token, once, for a new pair. Raises RefreshRefused: unknown or expired
    token, a signed-out device, or a rotated token used again (which signs the device out)."""
    now = timezone.now()
    token = (
        DeviceToken.objects.select_related("device", "device__owner")
        .filter(key_sha256=_digest(refresh_token), kind=DeviceToken.REFRESH)
        .first()
    )
    if token is None:
        raise RefreshRefused("invalid_refresh_token", "Unknown refresh token: sign in again.")
    device = token.device
    if device.signed_out_at is not None or not device.owner.is_active:
        raise RefreshRefused("device_signed_out", "This device was signed out: sign in again.")
    if token.rotated_at is not None:
        device_sign_out(device=device, reason="refresh_token_reused")
        raise RefreshRefused(
            "refresh_token_reused",
            "This refresh token was already used, so someone else may hold it: the device is signed out. "
            "Sign in again.",
        )
    if token.expires_at <= now:
        raise RefreshRefused("refresh_token_expired", "The refresh token has expired: sign in again.")
    with transaction.atomic():
        # Only one exchange wins; a concurrent second use of the same token is a reuse.
        won = DeviceToken.objects.filter(id=token.id, rotated_at__isnull=True).update(rotated_at=now)
        if won:
            # The previous access tokens end with the refresh that replaced them.
            DeviceToken.objects.filter(device=device, kind=DeviceToken.ACCESS, expires_at__gt=now).update(
                expires_at=now
            )
            pair = _issue_pair(device)
    if not won:
        device_sign_out(device=device, reason="refresh_token_reused")
        raise RefreshRefused("refresh_token_reused", "This refresh token was already used: sign in again.")
    return pair


def device_sign_out(*, device: SignedInDevice, reason: str = "user") -> None:
    """End the device's session: every token of its chain stops working at once."""
    now = timezone.now()
    SignedInDevice.objects.filter(id=device.id, signed_out_at__isnull=True).update(
        signed_out_at=now, signed_out_reason=reason
    )
    DeviceToken.objects.filter(device_id=device.id, expires_at__gt=now).update(expires_at=now)


def devices_sign_out_all(*, user, reason: str) -> int:
    """Sign out every device signed in to `user`'s account (a password change: whoever had the
    old one keeps no app session, as Django ends the other browsers' sessions); how many."""
    devices = list(SignedInDevice.objects.filter(owner=user, signed_out_at__isnull=True))
    for device in devices:
        device_sign_out(device=device, reason=reason)
    return len(devices)


@dataclass(frozen=True)
class AccessCheck:
    device: SignedInDevice | None
    expired: bool = False


def device_for_access_token(key: str) -> AccessCheck:
    """The signed-in device an access token belongs to (with its owner); `expired` when it is one
    that has run out (the app should refresh), device None when it is unknown or signed out."""
    token = (
        DeviceToken.objects.select_related("device", "device__owner")
        .defer("device__owner__password")
        .filter(key_sha256=_digest(key), kind=DeviceToken.ACCESS)
        .first()
    )
    if token is None or token.device.signed_out_at is not None:
        return AccessCheck(None)
    if token.expires_at <= timezone.now():
        return AccessCheck(None, expired=True)
    _touch(token.device)
    return AccessCheck(token.device)


def _touch(device: SignedInDevice) -> None:
    now = time.monotonic()
    if now - _touched.get(device.id, -TOUCH_EVERY_S) < TOUCH_EVERY_S:
        return
    if len(_touched) > 10_000:
        _touched.clear()
    _touched[device.id] = now
    SignedInDevice.objects.filter(id=device.id).update(last_used_at=timezone.now())


def devices_for_user(*, user) -> QuerySet[SignedInDevice]:
    return SignedInDevice.objects.filter(owner=user, signed_out_at__isnull=True)
