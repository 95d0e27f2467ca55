"""deploy/visage.env.example filled in as the operator's steps say: every change-me (and the example's
webhook secret) replaced with a random secret."""

from __future__ import annotations

import base64
import secrets

# base64 of "change-me-to-a-random-secret": production refuses it (webapp.env.refuse_example_secrets)
EXAMPLE_WEBHOOK_SECRET = "whsec_Y2hhbmdlLW1lLXRvLWEtcmFuZG9tLXNlY3JldA=="


def visage_env(example: str, s3_port: int | None = None) -> str:
    """deploy/visage.env.example with every change-me replaced, as an operator does."""
    webhook_secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    text = (
        example.replace("change-me-db-password", secrets.token_hex(12))
        .replace("change-me-minio-secret", secrets.token_hex(12))
        .replace("change-me-to-50-random-characters", secrets.token_urlsafe(40))
        .replace("GF_SECURITY_ADMIN_PASSWORD=change-me", f"GF_SECURITY_ADMIN_PASSWORD={secrets.token_hex(8)}")
        .replace(f"VISAGE_WEBHOOK_SECRET={EXAMPLE_WEBHOOK_SECRET}", f"VISAGE_WEBHOOK_SECRET={webhook_secret}")
    )
    assert webhook_secret in text, "visage.env.example's webhook secret changed"
    if s3_port is not None:
        text = text.replace("S3_PUBLIC_URL=http://localhost:9000", f"S3_PUBLIC_URL=http://127.0.0.1:{s3_port}")
        assert f"S3_PUBLIC_URL=http://127.0.0.1:{s3_port}" in text
    settings = [line for line in text.splitlines() if not line.startswith("#")]
    assert not [line for line in settings if "change-me" in line], "a new change-me in visage.env.example"
    return text
