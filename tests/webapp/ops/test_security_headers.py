"""The site's pages carry a Content-Security-Policy that still lets them work (#30 item 9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from webapp.ops.security_headers import NO_JS_SNIPPET

pytestmark = pytest.mark.django_db(transaction=True)

REPO = Path(__file__).resolve().parents[3]


def test_site_pages_get_a_policy_and_api_answers_do_not(user_a):
    client = Client()
    landing = client.get("/")
    policy = landing["Content-Security-Policy"]
    assert "script-src 'self' 'sha256-" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    assert "Content-Security-Policy" not in client.get("/api/v1/jobs")  # JSON (a 401 problem here)
    assert "Content-Security-Policy" not in client.get("/admin/login/")  # staff pages keep their inline scripts


def test_the_allowed_inline_script_is_the_one_in_base_html():
    """Its hash is in the policy: editing the snippet without the constant would block it in browsers."""
    assert f"<script>{NO_JS_SNIPPET}</script>" in (REPO / "templates" / "base.html").read_text()
