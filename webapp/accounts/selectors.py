"""Reads for API tokens."""

from __future__ import annotations

import hashlib

from django.db.models import QuerySet

from .models import ApiToken


def api_tokens_for_user(*, user) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(owner=user, revoked_at__isnull=True)


def api_token_by_key(key: str) -> ApiToken | None:
    """The live token with this plain key (only its hash is stored), with its owner."""
    digest = hashlib.sha256(key.encode()).hexdigest()
    return ApiToken.objects.select_related("owner").filter(key_sha256=digest, revoked_at__isnull=True).first()
