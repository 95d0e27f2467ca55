"""What a person reads when the site or the API refuses something: plain sentences, no field
syntax (`consent=true`), no raw paths, no byte counts, a suggestion only when it would help, and
"nothing was charged" said once on a page. The API keeps its codes, field names and links."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from tests.webapp.conftest import api_client_for, post_job

pytestmark = pytest.mark.django_db(transaction=True)

DEVELOPER_WORDING = re.compile(r"consent=true|/account/|/api/|\d{5,} bytes")


def site_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_consent_refusal_is_a_sentence_for_a_person(funded_user, api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    api = post_job(api_a, source, target, consent="false").json()
    assert api["code"] == "consent_required" and "consent" in api["errors"]
    assert not DEVELOPER_WORDING.search(api["detail"]), api["detail"]
    assert api["detail"].startswith("Please confirm that you have the right to use the face(s)")

    page = site_client(funded_user).post(
        "/jobs/new/",
        {"source": SimpleUploadedFile("s.png", source), "target": SimpleUploadedFile("t.jpg", target)},
    )
    html = page.content.decode()
    assert page.status_code == 400
    assert "Please confirm that you have the right" in html and "consent=true" not in html


def test_out_of_credits_names_no_path_and_suggests_only_what_helps(user_b, astronaut_pair):
    source, target, _ = astronaut_pair
    api = post_job(api_client_for(user_b), source, target, mode="hq", resolution="original").json()
    assert api["code"] == "insufficient_credits"
    assert api["links"]["top_up"].endswith("/account/credits/")  # the link stays, as a link
    assert not DEVELOPER_WORDING.search(api["detail"]), api["detail"]
    assert "Add credits to your account" in api["detail"]
    # On this small photo every quality and resolution costs the plan's minimum: nothing cheaper
    # to suggest.
    quotes = {
        api_client_for(user_b)
        .post("/api/v1/quotes", {"width": 460, "height": 430, "mode": mode, "resolution": res}, format="json")
        .json()["amount"]
        for mode in ("fast", "standard", "hq")
        for res in ("720p", "1080p", "original")
    }
    if len(quotes) == 1:
        assert "lower quality" not in api["detail"]
    else:
        assert f"from {min(quotes, key=float)} credits" in api["detail"]

    page = site_client(user_b).post(
        "/jobs/new/",
        {
            "source": SimpleUploadedFile("s.png", source),
            "target": SimpleUploadedFile("t.jpg", target),
            "consent": "on",
        },
    )
    html = page.content.decode()
    assert "Add credits to your account" in html and 'class="top-up-link"' in html
    assert not DEVELOPER_WORDING.search(re.sub(r'href="[^"]*"', "", html.split('id="form-error"')[1][:600]))


def test_a_large_file_is_refused_in_megabytes(funded_user, api_a, settings, astronaut_pair):
    source, target, _ = astronaut_pair
    settings.MAX_UPLOAD_BYTES = 10_000
    api = post_job(api_a, source, target).json()
    assert api["code"] == "file_too_large", api
    assert not DEVELOPER_WORDING.search(api["detail"]) and "bytes" not in api["detail"], api["detail"]
    assert re.search(r"\d KB", api["detail"].replace("\xa0", " ")), api["detail"]


def test_a_canceled_swap_says_not_charged_once(funded_user, api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    job = post_job(api_a, source, target).json()
    client = site_client(funded_user)
    page = client.post(f"/jobs/{job['id']}/cancel", follow=True)
    assert page.status_code == 200
    text = re.sub(r"<[^>]+>", " ", page.content.decode())
    assert len(re.findall(r"nothing was charged", text, re.IGNORECASE)) == 1, text
