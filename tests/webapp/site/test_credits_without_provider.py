"""Credits on an install without a payment provider: the packs and their prices are shown, a
person requests one, the request lands in the admin and by email with the staff, and staff add the
credits there (once). One unit, credits, on every page."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from django.core import mail
from django.test import Client
from playwright.sync_api import expect

from billing import selectors as billing_selectors
from billing.models import CreditPack, TopUpRequest
from tests.webapp.site.conftest import log_in

pytestmark = pytest.mark.django_db(transaction=True)

SCREENSHOTS = Path(__file__).resolve().parents[3] / "var" / "screenshots"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 900}


@pytest.fixture
def no_payment_provider(settings):
    settings.STRIPE_SECRET_KEY = ""
    for name in ("ALIPAY_APP_ID", "WECHATPAY_MCH_ID"):
        setattr(settings, name, "")


@pytest.fixture
def packs():
    return [
        CreditPack.objects.create(name="Starter", credits=Decimal("5"), price=Decimal("5.00"), position=0),
        CreditPack.objects.create(name="Large", credits=Decimal("100"), price=Decimal("90.00"), position=1),
    ]


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_superuser("root", "root@example.com", "root-pass-123")


def test_packs_are_shown_and_a_request_reaches_the_admin(no_payment_provider, packs, staff, user_b):
    client = Client()
    client.force_login(user_b)
    html = client.get("/account/credits/").content.decode()
    assert 'id="packs"' in html and "Starter" in html and "5.00 USD" in html and "90.00 USD" in html
    assert html.count("Request these credits") == 2

    response = client.post("/account/credits/request", {"pack": packs[1].pk})
    assert response.status_code == 302
    request = TopUpRequest.objects.get()
    assert (request.account.user, request.pack, request.credits, request.status) == (
        user_b,
        packs[1],
        100,
        "open",
    )
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["root@example.com"]
    assert "bob" in mail.outbox[0].subject and "100" in mail.outbox[0].subject
    assert "Waiting for an administrator" in client.get("/account/credits/").content.decode()

    admin = Client()
    admin.force_login(staff)
    listing = admin.get("/admin/billing/topuprequest/").content.decode()
    assert "bob" in listing and "Open" in listing
    for _ in range(2):  # a second click adds nothing more
        admin.post(
            "/admin/billing/topuprequest/",
            {"action": "add_credits", "_selected_action": [request.pk]},
        )
    assert billing_selectors.account_balance(user=user_b).available == Decimal("100")
    request.refresh_from_db()
    assert request.status == "done" and request.handled_by == staff and request.top_up is not None


def test_without_packs_an_amount_is_requested(no_payment_provider, user_b):
    client = Client()
    client.force_login(user_b)
    assert 'id="request-amount"' in client.get("/account/credits/").content.decode()
    assert client.post("/account/credits/request", {"credits": "abc"}).status_code == 400
    client.post("/account/credits/request", {"credits": "15"})
    assert TopUpRequest.objects.get().credits == Decimal("15")
    for _ in range(3):
        client.post("/account/credits/request", {"credits": "15"})
    assert TopUpRequest.objects.count() == 3  # at most three open requests each


@pytest.mark.parametrize("pack", ["abc", "1.5", "-3", "99999999999999999999"])
def test_a_pack_that_is_not_an_id_is_a_404_not_a_500(no_payment_provider, packs, user_b, pack):
    client = Client(raise_request_exception=False)
    client.force_login(user_b)
    assert client.post("/account/credits/request", {"pack": pack}).status_code == 404
    assert not TopUpRequest.objects.exists()


def test_landing_page_prices_in_credits(client):
    html = client.get("/").content.decode()
    assert 'id="prices"' in html and " credits</td>" in html and "USD" not in html


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_credits_page_without_provider_in_a_browser(
    new_page, live_server, funded_user, no_payment_provider, packs, viewport
):
    page = new_page(viewport=viewport)
    log_in(page, live_server, username="alice", password="alice-pass-123")
    page.goto(f"{live_server.url}/account/credits/")
    expect(page.get_by_role("heading", name="Get credits")).to_be_visible()
    buttons = page.get_by_role("button", name="Request these credits")
    expect(buttons).to_have_count(2)
    expect(page.get_by_text("90.00 USD")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # nothing overflows
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    name = "desktop" if viewport is DESKTOP else "phone"
    page.screenshot(path=SCREENSHOTS / f"credits-no-provider-{name}.png", full_page=True)
    buttons.first.click()
    expect(page.get_by_text("Request sent")).to_be_visible()
    expect(page.locator("#open-requests")).to_contain_text("5.00 credits (Starter)")
    page.screenshot(path=SCREENSHOTS / f"credits-requested-{name}.png", full_page=True)
