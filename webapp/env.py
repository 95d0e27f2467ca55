"""The one environment parser: typed helpers that `settings.py` reads every setting with.

A value that cannot be parsed raises ImproperlyConfigured naming the variable, so a typo in a
deployment stops the process at start-up instead of silently becoming a default.
`NAME_FILE` (a path) is accepted wherever `NAME` is, for Docker/Kubernetes secrets.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off"}


def _raw(name: str) -> str | None:
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        return Path(file_path).read_text().strip()
    value = os.environ.get(name)
    return None if value is None or value == "" else value


def env_str(name: str, default: str) -> str:
    value = _raw(name)
    return default if value is None else value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    if value.lower() in TRUE:
        return True
    if value.lower() in FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), not {value!r}")


def env_int(name: str, default: int) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}") from exc


def env_float(name: str, default: float) -> float:
    value = _raw(name)
    if value is None:
        return default
    try:
        return float(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number, not {value!r}") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_json(name: str, default):
    value = _raw(name)
    if value is None:
        return default
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ImproperlyConfigured(f"{name} must be JSON: {exc}") from exc


WEBHOOK_SECRET_PREFIX = "whsec_"
WEBHOOK_SECRET_MIN_BYTES = 16


def webhook_secret_bytes(secret: str) -> bytes:
    """The key a Standard Webhooks secret (`whsec_` + base64) signs with. Strict: the library's own
    decoder drops characters that are not base64, so a typo or a made-up `whsec_my-secret` would
    sign with a few stray bytes instead of failing."""
    if not secret.startswith(WEBHOOK_SECRET_PREFIX):
        raise ImproperlyConfigured(f"VISAGE_WEBHOOK_SECRET: each secret must start with {WEBHOOK_SECRET_PREFIX}")
    body = secret[len(WEBHOOK_SECRET_PREFIX):]
    try:
        key = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except binascii.Error as exc:
        raise ImproperlyConfigured(
            "VISAGE_WEBHOOK_SECRET: each secret is whsec_ and base64, e.g. whsec_$(openssl rand -base64 32)"
        ) from exc
    if len(key) < WEBHOOK_SECRET_MIN_BYTES:
        raise ImproperlyConfigured(
            f"VISAGE_WEBHOOK_SECRET: each secret needs at least {WEBHOOK_SECRET_MIN_BYTES} random bytes "
            f"(this one has {len(key)}): whsec_$(openssl rand -base64 32)"
        )
    return key


def webhook_secrets(value: str) -> list[str]:
    """VISAGE_WEBHOOK_SECRET: comma-separated secrets (rotation signs with all), each checked."""
    secrets = [item.strip() for item in value.split(",") if item.strip()]
    for secret in secrets:
        webhook_secret_bytes(secret)
    return secrets


EXAMPLE_SECRET_MARK = "change-me"


def refuse_example_secrets(values: dict[str, str]) -> None:
    """Production refuses a secret still holding deploy/visage.env.example's placeholder: those values
    are public (in this repository), so a copied example would sign sessions and open storage with a
    key anyone can read."""
    for name, value in values.items():
        if EXAMPLE_SECRET_MARK in value.lower():
            raise ImproperlyConfigured(
                f"{name} is still deploy/visage.env.example's placeholder ({EXAMPLE_SECRET_MARK}…): "
                "replace it with a random secret when VISAGE_PRODUCTION=1"
            )
