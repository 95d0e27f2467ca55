"""The site works under its Content-Security-Policy (webapp/ops/security_headers.py) in a real browser."""

from __future__ import annotations

import pytest

from tests.webapp.site.conftest import log_in, stored_result_job

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_result_page_works_under_the_policy(new_page, live_server, funded_user):
    """Result images from S3 (another origin), the page's scripts and the compare slider load with no
    policy violation reported by the browser (the other browser tests bypass the policy, so that
    Playwright may evaluate its own scripts; this one enforces it and waits without them)."""
    page = new_page(bypass_csp=False)
    violations = []
    page.on("console", lambda message: "Content Security Policy" in message.text and violations.append(message.text))
    log_in(page, live_server, username="alice", password="alice-pass-123")
    job = stored_result_job(funded_user, width=800, height=500, face_box=(300, 150, 450, 330))
    page.goto(f"{live_server.url}/jobs/{job.id}/")
    page.wait_for_load_state("load")
    assert page.locator("#result-image").evaluate("image => image.naturalWidth") == 800  # from S3
    page.locator("html.js").wait_for()  # the inline line ran
    page.goto(f"{live_server.url}/")
    page.goto(f"{live_server.url}/jobs/new/")
    assert violations == []
