"""One price everywhere: the upload page's estimate (the quote endpoint as the page calls
it, with the file), the API quote and the stored quote of jobs submitted through the API and through
the site are the same to the cent, for photos and videos."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from tests.webapp.conftest import post_job
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


def site_estimate(client: Client, target: bytes, name: str, **options) -> dict:
    """What upload.js does: the first quote sends the file; later ones the measured numbers."""
    first = client.post("/api/v1/quotes", {"target": SimpleUploadedFile(name, target), **options})
    assert first.status_code == 200, first.content
    body = first.json()
    again = client.post(
        "/api/v1/quotes", {**body["target"], **options}, content_type="application/json"
    ).json()
    assert again["amount"] == body["amount"]
    return body


@pytest.mark.parametrize(
    ("mode", "resolution"), [("fast", "720p"), ("standard", "1080p"), ("hq", "original")]
)
def test_photo_price_is_one_price(api_a, funded_user, astronaut_pair, mode, resolution):
    source, target, (width, height) = astronaut_pair
    client = Client()
    client.force_login(funded_user)
    options = {"mode": mode, "resolution": resolution}
    estimate = site_estimate(client, target, "target.jpg", **options)
    api_quote = api_a.post(
        "/api/v1/quotes", {"width": width, "height": height, "frames": 1, **options}, format="json"
    ).json()
    via_api = post_job(api_a, source, target, **options).json()
    via_site = client.post(
        "/jobs/new/",
        {
            "source": SimpleUploadedFile("s.png", source),
            "target": SimpleUploadedFile("t.jpg", target),
            "faces": "one",
            "consent": "on",
            **options,
        },
    )
    assert via_site.status_code == 302, via_site.content[:500]
    site_job = Job.objects.exclude(id=via_api["id"]).get()
    prices = {
        estimate["amount"],
        api_quote["amount"],
        via_api["quote"]["amount"],
        via_api["cost"]["price"],
        site_job.quote["amount"],
    }
    assert len(prices) == 1, prices
    assert estimate["amount_minor"] == api_quote["amount_minor"] == via_api["quote"]["amount_minor"]


def test_video_price_is_one_price(api_a, funded_user, clip, source_png):
    client = Client()
    client.force_login(funded_user)
    options = {"mode": "standard", "resolution": "720p"}
    estimate = site_estimate(client, clip, "clip.mp4", **options)
    assert estimate["target"]["frames"] == 24 and estimate["kind"] == "video"  # probed: 2 s × 12 fps
    api_quote = api_a.post("/api/v1/quotes", {**estimate["target"], **options}, format="json").json()
    response = api_a.post(
        "/api/v1/jobs",
        {
            "source": SimpleUploadedFile("s.png", source_png),
            "target": SimpleUploadedFile("c.mp4", clip),
            "consent": "true",
            **options,
        },
        format="multipart",
    )
    assert response.status_code == 201, response.content
    via_site = client.post(
        "/jobs/new/",
        {
            "source": SimpleUploadedFile("s.png", source_png),
            "target": SimpleUploadedFile("c.mp4", clip),
            "faces": "one",
            "consent": "on",
            **options,
        },
    )
    assert via_site.status_code == 302
    site_job = Job.objects.exclude(id=response.json()["id"]).get()
    assert (
        estimate["amount"]
        == api_quote["amount"]
        == response.json()["quote"]["amount"]
        == site_job.quote["amount"]
    )


def test_a_preset_above_the_photo_costs_what_the_original_costs(api_a):
    """1080p on a 661-px-tall photo: nothing is scaled up, so it costs what "original" costs."""
    prices = {
        resolution: api_a.post(
            "/api/v1/quotes",
            {"width": 1000, "height": 661, "mode": "standard", "resolution": resolution, "frames": 1},
            format="json",
        ).json()["amount"]
        for resolution in ("720p", "1080p", "original")
    }
    assert prices["1080p"] == prices["original"] == prices["720p"]


def test_quote_needs_a_size_or_a_file(api_a):
    response = api_a.post("/api/v1/quotes", {"mode": "standard", "resolution": "720p"}, format="json")
    assert response.status_code == 400 and response["Content-Type"] == "application/problem+json"
    bad = api_a.post(
        "/api/v1/quotes",
        {"target": SimpleUploadedFile("x.jpg", b"not an image"), "mode": "standard", "resolution": "720p"},
        format="multipart",
    )
    assert bad.status_code in (400, 415) and bad.json()["errors"]["target"]


def test_insufficient_credit_problem_links_to_buying_credits(user_b, astronaut_pair):
    from tests.webapp.conftest import api_client_for

    source, target, _ = astronaut_pair
    client = api_client_for(user_b)  # no credit at all
    response = post_job(client, source, target)
    assert response.status_code == 402
    body = response.json()
    assert body["code"] == "insufficient_credits"
    assert body["links"]["top_up"].endswith("/account/credits/")
    assert "Add credits to your account" in body["detail"] and "/account/" not in body["detail"]
    quote = client.post(
        "/api/v1/quotes",
        {"width": 460, "height": 430, "mode": "standard", "resolution": "720p"},
        format="json",
    ).json()
    assert quote["sufficient"] is False and quote["links"]["top_up"].endswith("/account/credits/")
