"""webapp.env's checks of secrets (pure logic; the production start-up with the deploy files is in
tests/deploy/test_production_settings.py)."""

from __future__ import annotations

import base64

import pytest
from django.core.exceptions import ImproperlyConfigured
from standardwebhooks import Webhook

from webapp.env import refuse_example_secrets, webhook_secrets

GOOD = "whsec_" + base64.b64encode(b"k" * 32).decode()


def test_webhook_secrets_split_on_commas_for_rotation():
    other = "whsec_" + base64.b64encode(b"n" * 24).decode().rstrip("=")  # unpadded, as Svix prints them
    assert webhook_secrets(f" {GOOD} ,{other},") == [GOOD, other]
    assert webhook_secrets("") == []


@pytest.mark.parametrize(
    ("secret", "refusal"),
    [
        (base64.b64encode(b"k" * 32).decode(), "must start with whsec_"),
        # standardwebhooks' own decoder drops the characters that are not base64: this would sign
        # with the 9 bytes of "changemeto" read as base64, a key anyone could guess.
        ("whsec_change-me-to-a-random-secret", "base64"),
        ("whsec_" + base64.b64encode(b"short").decode(), "at least 16 random bytes"),
    ],
    ids=["no-prefix", "not-base64", "too-short"],
)
def test_a_webhook_secret_that_would_sign_with_a_weak_key_is_refused(secret, refusal):
    Webhook(secret)  # the library takes each of them without complaint
    with pytest.raises(ImproperlyConfigured, match=refusal):
        webhook_secrets(f"{GOOD},{secret}")


def test_an_example_placeholder_is_refused_by_name():
    refuse_example_secrets({"SECRET_KEY": "x" * 50, "S3_SECRET_KEY": "a-real-secret"})
    with pytest.raises(ImproperlyConfigured, match="S3_SECRET_KEY is still"):
        refuse_example_secrets({"SECRET_KEY": "x" * 50, "S3_SECRET_KEY": "Change-Me-minio-secret"})
