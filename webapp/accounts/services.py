"""Writes for API tokens."""

from __future__ import annotations

import hashlib
import secrets
import time

from django.core.cache import cache
from django.utils import timezone

from . import selectors
from .models import ApiToken

TOUCH_EVERY_S = 60
_touched: dict[int, float] = {}  # token id -> when this process last wrote its last_used_at


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
    forget_tokens([token.key_sha256])


def api_tokens_revoke_all(*, user) -> int:
    """Revoke every live API token of `user` (a password reset); how many."""
    live = ApiToken.objects.filter(owner=user, revoked_at__isnull=True)
    hashes = list(live.values_list("key_sha256", flat=True))
    live.update(revoked_at=timezone.now())
    forget_tokens(hashes)
    return len(hashes)


def forget_tokens(digests) -> None:
    """Cached copies of these tokens are no longer trusted (selectors.api_token_by_key)."""
    stale = {selectors.token_cache_key(digest): selectors.STALE for digest in digests}
    if stale:
        cache.set_many(stale, selectors.TOKEN_CACHE_S)


def api_token_touch(*, token: ApiToken) -> None:
    """Record that a token was used, at most once a minute per server process (not a write on
    every request; the token may be a cached copy, so the minute is counted here)."""
    now = time.monotonic()
    if now - _touched.get(token.id, -TOUCH_EVERY_S) < TOUCH_EVERY_S:
        return
    if len(_touched) > 10_000:
        _touched.clear()
    _touched[token.id] = now
    ApiToken.objects.filter(id=token.id).update(last_used_at=timezone.now())
