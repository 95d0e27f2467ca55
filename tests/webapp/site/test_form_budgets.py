"""The site's anonymous forms have budgets per client address (webapp/site/limits.py): each costs
something real, and none had a limit (found by trying them as an attacker: 30 sign-ups from one
client took 600 free credits, 60 reset emails reached one inbox in a burst, 15 anonymous takedown
reports ran face detection on the web server)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from billing import selectors
from moderation.models import TakedownReport

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "Sup3r-long-pass!"


def _sign_up(name: str, address: str = "198.51.100.7"):
    return Client(REMOTE_ADDR=address).post(
        "/signup/", {"username": name, "email": "", "password1": PASSWORD, "password2": PASSWORD}
    )


def test_sign_ups_from_one_address_are_limited(settings):
    settings.SITE_THROTTLE_RATES = {**settings.SITE_THROTTLE_RATES, "signup": "3/hour"}
    for i in range(3):
        assert _sign_up(f"farm{i}").status_code == 302
    refused = _sign_up("farm3")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "Too many attempts" in refused.content.decode()
    assert not get_user_model().objects.filter(username="farm3").exists()
    assert sum(selectors.account_balance(user=u).available for u in get_user_model().objects.all()) == 3 * 20
    assert _sign_up("elsewhere", address="203.0.113.50").status_code == 302  # another network


def test_a_mistyped_sign_up_does_not_use_the_budget(settings):
    settings.SITE_THROTTLE_RATES = {**settings.SITE_THROTTLE_RATES, "signup": "1/hour"}
    client = Client(REMOTE_ADDR="198.51.100.8")
    for _ in range(3):
        mistyped = {"username": "dora", "email": "", "password1": PASSWORD, "password2": "other"}
        assert client.post("/signup/", mistyped).status_code == 200
    assert _sign_up("dora", address="198.51.100.8").status_code == 302


def test_reset_emails_are_limited_per_address_and_per_client(settings):
    settings.SITE_THROTTLE_RATES = {**settings.SITE_THROTTLE_RATES, "password_reset": "2/hour"}
    get_user_model().objects.create_user("vic", email="vic@example.com", password=PASSWORD)
    # From many networks at one address: the page says "sent" every time, 2 emails go out.
    for i in range(5):
        response = Client(REMOTE_ADDR=f"203.0.113.{i + 1}").post("/password/reset/", {"email": "VIC@example.com"})
        assert response.status_code == 302 and response["Location"] == "/password/reset/sent/"
    assert len(mail.outbox) == 2
    # From one network at many addresses: refused after its budget.
    one = Client(REMOTE_ADDR="198.51.100.9")
    assert [one.post("/password/reset/", {"email": f"x{i}@example.com"}).status_code for i in range(3)] == [302, 302, 429]


def test_takedown_reports_from_one_address_are_limited(settings):
    settings.SITE_THROTTLE_RATES = {**settings.SITE_THROTTLE_RATES, "report": "2/hour"}
    reporter = {
        "reporter_name": "Ada Example", "reporter_email": "ada@example.com", "relation": "self",
        "link": "https://visage.example/share/abc",
    }
    client = Client(REMOTE_ADDR="198.51.100.10")
    statuses = [client.post("/report", reporter).status_code for _ in range(3)]
    assert statuses == [200, 200, 429] and TakedownReport.objects.count() == 2
