"""Presigned URLs name the address clients reach S3 at (S3_PUBLIC_URL), not the one the app uses
(compose: minio:9000, which only its network resolves); the signature covers that host."""

from __future__ import annotations

import subprocess
import sys
import uuid
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.test import override_settings

from webapp.media import storage


def stored_object() -> tuple[str, str]:
    storage.ensure_buckets()
    key = f"public-url/{uuid.uuid4().hex}.txt"
    storage.put_bytes(settings.S3_RESULTS_BUCKET, key, b"result bytes", "text/plain")
    return settings.S3_RESULTS_BUCKET, key


def test_urls_name_s3_endpoint_without_a_public_url():
    bucket, key = stored_object()
    url = storage.presigned_get(bucket, key)
    assert urlsplit(url).netloc == settings.S3_ENDPOINT
    assert requests.get(url, timeout=30).content == b"result bytes"


def test_urls_are_signed_for_the_public_address():
    """The same server under another name (localhost instead of 127.0.0.1): the URL names it and
    S3 accepts the signature for it, while the same query on the other host is refused."""
    bucket, key = stored_object()
    host, port = settings.S3_ENDPOINT.rsplit(":", 1)
    assert host == "127.0.0.1"
    with override_settings(S3_PUBLIC_URL=f"http://localhost:{port}"):
        url = storage.presigned_get(bucket, key, download_name="result.txt")
    parts = urlsplit(url)
    assert parts.scheme == "http" and parts.netloc == f"localhost:{port}"
    fetched = requests.get(url, timeout=30)
    assert fetched.status_code == 200 and fetched.content == b"result bytes"
    assert 'filename="result.txt"' in fetched.headers["Content-Disposition"]
    # Signed for localhost: the same query sent with the Host 127.0.0.1 does not verify.
    assert requests.get(parts._replace(netloc=settings.S3_ENDPOINT).geturl(), timeout=30).status_code == 403


def test_a_public_url_without_a_scheme_stops_the_settings():
    loaded = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], capture_output=True, text=True,
        env={"DJANGO_SETTINGS_MODULE": "webapp.settings", "S3_PUBLIC_URL": "files.example.com",
             "PATH": "/usr/bin:/bin"},
    )
    assert loaded.returncode != 0
    assert "S3_PUBLIC_URL must be http(s)://host[:port]" in loaded.stderr
