"""Per-client defaults: a job without `resolution` gets 720p from a mobile app and 1080p from the
web (the X-Visage-Client header, else the signed-in device's client, else the channel); an explicit
resolution always wins."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.webapp.conftest import post_job
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


def resolution_of(response) -> str:
    assert response.status_code == 201, response.content
    return Job.objects.get(id=response.json()["id"]).resolution


def device_client(kind: str) -> APIClient:
    body = (
        APIClient()
        .post(
            "/api/v1/auth/token",
            {
                "username": "alice",
                "password": "alice-pass-123",
                "device_name": f"{kind} device",
                "client": kind,
            },
            format="json",
        )
        .json()
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {body['access_token']}")
    return client


def test_the_header_names_the_client(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    assert resolution_of(post_job(api_a, source, target, headers={"X-Visage-Client": "mobile"})) == "720p"
    assert resolution_of(post_job(api_a, source, target, headers={"X-Visage-Client": "web"})) == "1080p"


def test_the_signed_in_devices_client_sets_the_default(funded_user, astronaut_pair):
    source, target, _ = astronaut_pair
    assert resolution_of(post_job(device_client("mobile"), source, target)) == "720p"
    assert resolution_of(post_job(device_client("web"), source, target)) == "1080p"
    # The header, when sent, says what this request is.
    assert resolution_of(
        post_job(device_client("web"), source, target, headers={"X-Visage-Client": "mobile"})
    ) == ("720p")


def test_without_a_hint_the_api_is_mobile_and_the_site_is_web(api_a, funded_user, astronaut_pair):
    source, target, _ = astronaut_pair
    assert resolution_of(post_job(api_a, source, target)) == "720p"  # a long-lived app token
    site = APIClient()
    site.force_login(funded_user)  # the site's upload page posts with its session
    assert resolution_of(post_job(site, source, target)) == "1080p"


def test_an_explicit_resolution_always_wins(api_a, funded_user, astronaut_pair):
    source, target, _ = astronaut_pair
    assert resolution_of(post_job(api_a, source, target, resolution="1080p")) == "1080p"
    web = {"X-Visage-Client": "web"}
    assert resolution_of(post_job(api_a, source, target, resolution="720p", headers=web)) == "720p"
    assert resolution_of(post_job(device_client("web"), source, target, resolution="original")) == "original"


def test_an_unknown_client_header_is_a_400(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    response = post_job(api_a, source, target, headers={"X-Visage-Client": "toaster"})
    assert response.status_code == 400 and "X-Visage-Client" in response.json()["errors"]
    assert Job.objects.count() == 0


def test_the_site_form_starts_at_the_web_default(client, funded_user):
    client.force_login(funded_user)
    page = client.get("/jobs/new/").content.decode()
    checked = [line for line in page.splitlines() if 'name="resolution"' in line and "checked" in line]
    assert len(checked) == 1 and 'value="1080p"' in checked[0]


def test_the_schema_documents_the_defaults():
    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/json").json()
    field = schema["components"]["schemas"]["JobCreateRequest"]["properties"]["resolution"]
    assert "720p for mobile apps, 1080p for the web" in field["description"]
