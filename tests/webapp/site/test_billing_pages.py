"""Money on the site's pages: the job page says Price / Paid / Not charged / Refunded in
one sentence right for each state, the account page shows credits, one history row per job with 50
a page, and the credits pages (buy, success, cancel) work with and without Stripe keys."""

from __future__ import annotations

import re
import uuid
from decimal import Decimal

import pytest
from django.test import Client

from billing import services as billing_services
from billing.models import CreditPack, LedgerEntry
from tests.webapp.conftest import drain, post_job
from webapp.jobs.models import Job
from webapp.jobs.services import lifecycle

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client_a(funded_user) -> Client:
    client = Client()
    client.force_login(funded_user)
    return client


def cost_sentence(client: Client, job_id) -> tuple[str, str]:
    html = client.get(f"/jobs/{job_id}/").content.decode()
    title = re.search(r'id="cost-title">([^<]+)<', html).group(1)
    sentence = re.search(r'id="cost-sentence">([^<]+)<', html).group(1)
    return title, sentence


def test_job_page_wording_in_every_state(client_a, api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    running = post_job(api_a, source, target).json()
    price = running["quote"]["amount"]
    assert cost_sentence(client_a, running["id"]) == (
        "Price",
        f"Price: {price} credits, set aside while the swap runs. You pay at most this; "
        "if it fails or is canceled, nothing is charged.",
    )

    canceled = post_job(api_a, source, target).json()
    api_a.post(f"/api/v1/jobs/{canceled['id']}/cancel")
    assert cost_sentence(client_a, canceled["id"]) == (
        "Not charged",
        f"Nothing was charged: the {price} credits set aside are available again.",
    )
    page = client_a.get(f"/jobs/{canceled['id']}/").content.decode()
    assert "No charge was made. No charge was made" not in page and "-0.00" not in page

    drain()  # the first job runs
    job = Job.objects.get(id=running["id"])
    assert job.state == "succeeded"
    paid = api_a.get(f"/api/v1/jobs/{job.id}").json()["cost"]["paid"]
    assert Decimal(paid) <= Decimal(price)
    assert cost_sentence(client_a, job.id) == ("Paid", f"Paid {paid} credits (the price shown was {price}).")

    billing_services.job_refund(job_id=job.id, actor=None, reason="support")
    title, sentence = cost_sentence(client_a, job.id)
    assert (title, sentence) == ("Refunded", f"Refunded {paid} credits: this swap cost you nothing.")
    assert "captured" not in client_a.get(f"/jobs/{job.id}/").content.decode()


def test_failed_job_says_nothing_was_charged(client_a, api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    job = post_job(api_a, source, target).json()
    lifecycle.job_fail(uuid.UUID(job["id"]), code="engine_error", message="The face swap failed unexpectedly.")
    title, sentence = cost_sentence(client_a, job["id"])
    assert title == "Not charged" and sentence.startswith("Nothing was charged")
    assert api_a.get(f"/api/v1/jobs/{job['id']}").json()["credits"] == sentence


def test_account_shows_credits_and_one_row_per_job(client_a, api_a, astronaut_pair, funded_user):
    source, target, _ = astronaut_pair
    first = post_job(api_a, source, target).json()
    second = post_job(api_a, source, target).json()
    api_a.post(f"/api/v1/jobs/{second['id']}/cancel")
    html = client_a.get("/account/").content.decode()
    assert "Reserved while running" in html and "Held for running" not in html
    assert "-0.00" not in html
    assert html.count('class="history-row') == 3  # two jobs + the funding top-up
    assert html.count(f"/jobs/{first['id']}/") == 1 and html.count(f"/jobs/{second['id']}/") == 1
    assert "Buy credits" in html and " credits" in html
    assert LedgerEntry.objects.filter(job_id=second["id"]).count() == 2  # set aside + returned, one row


def test_history_pages_hold_50_rows(client_a, funded_user):
    for i in range(60):
        billing_services.account_top_up(user=funded_user, amount=Decimal("1"), actor=None, reason=f"gift {i}")
    first = client_a.get("/account/").content.decode()
    second = client_a.get("/account/?page=2").content.decode()
    assert first.count('class="history-row') == 50
    assert second.count('class="history-row') == 11  # 60 gifts + the funding top-up
    assert 'rel="next"' in first and 'rel="prev"' in second
    assert client_a.get("/account/?page=99").status_code == 200  # the last page, not an error
    csv = client_a.get("/api/v1/ledger/export.csv")
    assert csv.status_code == 200 and csv.content.decode().count("\n") == 62


def test_credits_page_without_stripe_says_payments_are_not_configured(client_a, settings):
    settings.STRIPE_SECRET_KEY = ""
    CreditPack.objects.create(name="Starter", credits=Decimal("100"), price=Decimal("9.99"))
    html = client_a.get("/account/credits/").content.decode()
    assert 'id="payments-off"' in html and "administrator" in html
    response = client_a.post(f"/account/credits/{CreditPack.objects.get().pk}/buy")
    assert response.status_code == 503


def test_credits_page_sends_the_buyer_to_stripe_checkout(client_a, settings, monkeypatch):
    from billing import stripe_gateway
    from tests.helpers.fake_stripe import FakeStripeHttp

    settings.STRIPE_SECRET_KEY = "sk_test_visage"
    monkeypatch.setattr(stripe_gateway, "http_client", FakeStripeHttp())
    pack = CreditPack.objects.create(name="Starter", credits=Decimal("100"), price=Decimal("9.99"))
    html = client_a.get("/account/credits/").content.decode()
    assert "Starter" in html and "9.99 USD" in html
    response = client_a.post(f"/account/credits/{pack.pk}/buy")
    assert response.status_code == 302 and response["Location"].startswith("https://checkout.stripe.com/")
    assert "No payment was made" in client_a.get("/account/credits/canceled/").content.decode()
    assert "being confirmed" in client_a.get("/account/credits/success/?session_id=cs_x").content.decode()
    account_html = client_a.get("/account/").content.decode()
    assert "worth" in account_html  # the balance's money value at the pack's price


def test_site_upload_without_credit_links_to_buying_credits(user_b, astronaut_pair):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = Client()
    client.force_login(user_b)
    source, target, _ = astronaut_pair
    response = client.post(
        "/jobs/new/",
        {
            "source": SimpleUploadedFile("s.png", source),
            "target": SimpleUploadedFile("t.jpg", target),
            "mode": "standard",
            "resolution": "720p",
            "faces": "one",
            "consent": "on",
        },
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'class="top-up-link" href="/account/credits/"' in html
    assert "top up on your Account page" not in html
