"""Writes for API tokens."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.utils import timezone

from .models import ApiToken


def api_token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """Returns the token row and the plain key, which is shown once and never stored."""
    key = f"vsg_{secrets.token_urlsafe(32)}"
    token = ApiToken.objects.create(
        owner=user,
        name=name[:100] or "API token",
        key_sha256=hashlib.sha256(key.encode()).hexdigest(),
        prefix=key[:10],
    )
    return token, key


def api_token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(id=token.id, revoked_at__isnull=True).update(revoked_at=timezone.now())


def api_token_touch(*, token: ApiToken) -> None:
    """Record that a token was used, at most once a minute (not a write on every request)."""
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > timedelta(minutes=1):
        ApiToken.objects.filter(id=token.id).update(last_used_at=now)
