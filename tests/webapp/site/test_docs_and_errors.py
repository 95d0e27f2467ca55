"""API docs that work offline (Swagger UI and ReDoc from our own static files) and the site's own
error pages instead of Django's debug pages."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from django.test import Client, override_settings
from django.urls import include, path
from playwright.sync_api import expect

from tests.webapp.site.conftest import log_in

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = {"username": "alice", "password": "alice-pass-123"}


def _offline(page, live_server) -> list[str]:
    """Let the page reach only the live server; return the other addresses it tried."""
    host = urlparse(live_server.url).netloc
    refused: list[str] = []

    def route(r):
        if urlparse(r.request.url).netloc == host:
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return refused


def test_swagger_ui_and_redoc_render_without_internet(new_page, live_server, artifacts):
    page = new_page(bypass_csp=False)  # the pages' own policies are part of staying offline
    refused = _offline(page, live_server)
    # The bundles are large and the test server is slow on a busy machine: wait for what is drawn.
    page.goto(f"{live_server.url}/api/docs/", wait_until="domcontentloaded", timeout=60_000)
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible(timeout=60_000)
    expect(page.get_by_text("/api/v1/jobs", exact=True).first).to_be_visible()
    page.screenshot(path=artifacts / "50-api-docs-offline.png")
    page.goto(f"{live_server.url}/api/redoc/", wait_until="domcontentloaded", timeout=60_000)
    expect(page.get_by_role("heading", name=re.compile("Visage API")).first).to_be_visible(timeout=60_000)
    page.screenshot(path=artifacts / "51-api-redoc-offline.png")
    assert refused == [], refused


def raise_error(request):
    raise RuntimeError("boom")


urlpatterns = [path("boom/", raise_error), path("", include("webapp.urls"))]


@override_settings(DEBUG=False)
def test_error_pages_are_the_sites_own(client, funded_user, settings):
    client.force_login(funded_user)
    missing = client.get("/jobs/00000000-0000-0000-0000-000000000000/")
    assert missing.status_code == 404
    body = missing.content.decode()
    assert "We can’t find that page" in body and "Go to your swaps" in body and "visage.css" in body
    assert "Using the URLconf" not in body and "DEBUG = True" not in body

    settings.ROOT_URLCONF = __name__
    failing = Client(raise_request_exception=False).get("/boom/")
    assert failing.status_code == 500
    assert "Something went wrong on our side" in failing.content.decode()
    assert "RuntimeError" not in failing.content.decode()


@override_settings(DEBUG=False)
def test_csrf_failure_page_is_the_sites_own(funded_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(funded_user)
    response = client.post("/account/tokens", {"name": "x"})
    assert response.status_code == 403
    assert "This form has expired" in response.content.decode()


def test_not_found_page_in_the_browser(page, live_server, funded_user, settings, artifacts):
    settings.DEBUG = False
    log_in(page, live_server, **ALICE)
    response = page.goto(f"{live_server.url}/jobs/00000000-0000-0000-0000-000000000000/")
    assert response.status == 404
    expect(page.get_by_role("heading", name="We can’t find that page")).to_be_visible()
    expect(page.get_by_role("link", name="Go to your swaps")).to_be_visible()
    assert page.evaluate("getComputedStyle(document.body).fontFamily").startswith("system-ui")  # the stylesheet loaded
    page.screenshot(path=artifacts / "52-not-found.png", full_page=True)


def test_the_account_page_links_to_the_api_docs(funded_user):
    client = Client()
    client.force_login(funded_user)
    html = client.get("/account/").content.decode()
    assert 'href="/api/docs/"' in html and 'href="/api/redoc/"' in html
    assert client.get("/api/docs/").status_code == 200  # a link that opens
