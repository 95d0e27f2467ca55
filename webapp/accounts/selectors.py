"""Reads for API tokens.

A live token and its owner are kept in the cache for TOKEN_CACHE_S after a lookup, so a client
that polls does not cost a database query per request. Every write that can make a cached copy
wrong replaces it with STALE for TOKEN_CACHE_S (services.forget_tokens): revoking the token, and
any save or delete of the token or its owner (accounts/signals.py, e.g. a deactivated user).
While STALE is there each use reads the row, and a lookup that read the row before the write
cannot put its old copy back (it only `add`s). A write that bypasses both (a queryset update of
users) is seen after at most TOKEN_CACHE_S.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from django.db.models import QuerySet

from .models import ApiToken

TOKEN_CACHE_S = 60
STALE = "stale"


def api_tokens_for_user(*, user) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(owner=user, revoked_at__isnull=True)


def api_token_by_key(key: str) -> ApiToken | None:
    """The live token with this plain key (only its hash is stored), with its owner."""
    digest = hashlib.sha256(key.encode()).hexdigest()
    cached = cache.get(token_cache_key(digest))
    if isinstance(cached, ApiToken):
        return cached
    token = (
        ApiToken.objects.select_related("owner")
        .defer("owner__password")  # never copied to the cache (read from the row if ever needed)
        .filter(key_sha256=digest, revoked_at__isnull=True)
        .first()
    )
    if token is not None and cached is None:
        cache.add(token_cache_key(digest), token, TOKEN_CACHE_S)
    return token


def token_cache_key(digest: str) -> str:
    return f"visage:api-token:{digest}"
