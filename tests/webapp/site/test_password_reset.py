"""Password reset by email and password change, through Django's test client and mail.outbox."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from playwright.sync_api import expect
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

OLD = "old-pass-phrase-42"
NEW = "brand-new-pass-phrase-7"
LINK = re.compile(r"https?://[^/\s]+(/password/reset/[^/\s]+/[^/\s]+/)")


@pytest.fixture
def dora():
    return get_user_model().objects.create_user("dora", email="dora@example.com", password=OLD)


def _request_reset(client: Client, email: str):
    response = client.post("/password/reset/", {"email": email})
    assert response.status_code == 302 and response["Location"] == "/password/reset/sent/"
    return client.get(response["Location"])


def _reset_path() -> str:
    assert len(mail.outbox) == 1
    match = LINK.search(mail.outbox[0].body)
    assert match, mail.outbox[0].body
    return match.group(1)


def _can_log_in(password: str) -> bool:
    return Client().login(username="dora", password=password)


def test_login_page_links_to_reset(client):
    response = client.get("/login/")
    assert b'href="/password/reset/"' in response.content and b"Forgot your password?" in response.content


def test_reset_by_email_sets_a_new_password(client, dora, settings):
    settings.PASSWORD_RESET_TIMEOUT = 24 * 3600
    page = _request_reset(client, "DORA@example.com")  # addresses match case-insensitively
    assert b"Check your inbox" in page.content and b"24 hours" in page.content

    message = mail.outbox[0]
    assert message.to == ["dora@example.com"]
    assert message.subject == "Reset your Visage password"
    assert message.from_email == settings.DEFAULT_FROM_EMAIL
    assert "Visage" in message.body and "expires in 24 hours" in message.body
    assert "don't need to do anything" in message.body
    assert "&#x27;" not in message.body and "&amp;" not in message.body  # plain text, not HTML-escaped

    # The link redirects to a token-free URL (so the token does not leak in Referer headers).
    form_page = client.get(_reset_path(), follow=True)
    assert form_page.status_code == 200 and b"Choose a new password" in form_page.content
    form_url = form_page.redirect_chain[-1][0]

    mismatch = client.post(form_url, {"new_password1": NEW, "new_password2": NEW + "x"})
    assert mismatch.status_code == 200
    error = re.search(rb'id="id_new_password2_error"[^>]*>([^<]*)<', mismatch.content)
    assert error and b"didn" in error.group(1)  # "The two password fields didn't match."
    assert b'aria-invalid="true"' in mismatch.content

    done = client.post(form_url, {"new_password1": NEW, "new_password2": NEW})
    assert done.status_code == 302 and done["Location"] == "/password/reset/done/"
    assert b"Password changed" in client.get(done["Location"]).content

    assert _can_log_in(NEW)
    assert not _can_log_in(OLD)


def test_unknown_email_gets_the_same_page_and_no_email(client, dora):
    known = _request_reset(Client(), "dora@example.com")
    mail.outbox.clear()
    unknown = _request_reset(client, "nobody@example.com")
    assert unknown.status_code == 200 and b"Check your inbox" in unknown.content
    assert mail.outbox == []
    strip = re.compile(rb'name="csrf-token" content="[^"]*"|name="csrfmiddlewaretoken" value="[^"]*"')  # + the switcher's
    assert strip.sub(b"", known.content) == strip.sub(b"", unknown.content)


def test_a_used_link_cannot_be_reused(client, dora):
    _request_reset(client, "dora@example.com")
    path = _reset_path()
    form_url = client.get(path, follow=True).redirect_chain[-1][0]
    client.post(form_url, {"new_password1": NEW, "new_password2": NEW})

    again = Client().get(path, follow=True)
    assert again.status_code == 200
    assert b"This link doesn" in again.content and b'href="/password/reset/"' in again.content
    assert b"new_password1" not in again.content
    assert _can_log_in(NEW)


def test_reset_form_errors_are_shown_next_to_the_field(client):
    response = client.post("/password/reset/", {"email": "not-an-email"})
    assert response.status_code == 200
    assert re.search(rb'id="id_email_error"[^>]*>[^<]*valid email', response.content)
    assert mail.outbox == []


def test_logged_in_password_change_keeps_the_session(dora):
    client = Client()
    assert client.login(username="dora", password=OLD)
    account = client.get("/account/")
    assert b'href="/account/password/"' in account.content and b"Change password" in account.content

    wrong = client.post(
        "/account/password/", {"old_password": "nope", "new_password1": NEW, "new_password2": NEW}
    )
    assert wrong.status_code == 200 and b'id="id_old_password_error"' in wrong.content

    response = client.post(
        "/account/password/", {"old_password": OLD, "new_password1": NEW, "new_password2": NEW}
    )
    assert response.status_code == 302 and response["Location"] == "/account/password/done/"
    assert b"Password changed" in client.get("/account/password/done/").content
    assert client.get("/account/").status_code == 200  # still signed in
    assert _can_log_in(NEW) and not _can_log_in(OLD)


def test_password_change_needs_a_login(client):
    response = client.get("/account/password/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def _app_credentials(username: str, password: str) -> tuple[APIClient, APIClient, str]:
    """An API token and a signed-in app device made with the password: (token client, device
    client, the device's refresh token)."""
    anonymous = APIClient()
    token = anonymous.post("/api/v1/auth/token", {"username": username, "password": password}, format="json")
    device = anonymous.post(
        "/api/v1/auth/token", {"username": username, "password": password, "device_name": "phone"}, format="json"
    )
    assert token.status_code == device.status_code == 201, (token.content, device.content)
    with_token, with_device = APIClient(), APIClient()
    with_token.credentials(HTTP_AUTHORIZATION=f"Bearer {token.json()['token']}")
    with_device.credentials(HTTP_AUTHORIZATION=f"Bearer {device.json()['access_token']}")
    assert with_token.get("/api/v1/me").status_code == 200 and with_device.get("/api/v1/me").status_code == 200
    return with_token, with_device, device.json()["refresh_token"]


def test_a_password_change_signs_out_the_apps_and_keeps_api_tokens(dora):
    """Whoever signed in an app with the old password kept the session (and refreshed it forever):
    the other browsers were logged out, the apps were not."""
    with_token, with_device, refresh = _app_credentials("dora", OLD)
    client = Client()
    assert client.login(username="dora", password=OLD)
    changed = client.post("/account/password/", {"old_password": OLD, "new_password1": NEW, "new_password2": NEW})
    assert changed.status_code == 302
    assert with_device.get("/api/v1/me").status_code == 401
    assert APIClient().post("/api/v1/auth/refresh", {"refresh_token": refresh}, format="json").status_code == 401
    assert with_token.get("/api/v1/me").status_code == 200  # API tokens keep working (the page says so)
    assert b"the apps signed in to your account have been logged out" in client.get("/account/password/done/").content


def test_a_password_reset_also_revokes_the_api_tokens(client, dora):
    """A reset is how an account is taken back: whoever knew the old password may have made tokens."""
    with_token, with_device, _ = _app_credentials("dora", OLD)
    _request_reset(client, "dora@example.com")
    form = client.get(_reset_path())
    done = client.post(form["Location"], {"new_password1": NEW, "new_password2": NEW})
    assert done.status_code == 302 and _can_log_in(NEW)
    assert with_token.get("/api/v1/me").status_code == 401
    assert with_device.get("/api/v1/me").status_code == 401
    assert b"API tokens revoked" in client.get(done["Location"]).content


@pytest.mark.django_db(transaction=True)
def test_reset_in_the_browser(new_page, live_server, artifacts):
    get_user_model().objects.create_user("dora", email="dora@example.com", password=OLD)
    page = new_page()
    page.goto(f"{live_server.url}/login/")
    page.screenshot(path=artifacts / "29-login-forgot-link.png", full_page=True)
    page.get_by_role("link", name="Forgot your password?").click()
    expect(page).to_have_url(f"{live_server.url}/password/reset/")
    expect(page.get_by_role("heading", name="Reset your password")).to_be_visible()
    page.screenshot(path=artifacts / "30-password-reset-form.png", full_page=True)

    page.get_by_label("Email").fill("not-an-email")
    page.get_by_role("button", name="Send reset link").click()
    expect(page.locator("#id_email_error")).to_contain_text("valid email")
    page.screenshot(path=artifacts / "31-password-reset-form-error.png", full_page=True)

    page.get_by_label("Email").fill("dora@example.com")
    page.get_by_label("Email").press("Enter")  # the keyboard submits the form
    expect(page).to_have_url(f"{live_server.url}/password/reset/sent/")
    expect(page.get_by_role("heading", name="Check your inbox")).to_be_visible()
    page.screenshot(path=artifacts / "32-password-reset-sent.png", full_page=True)

    page.goto(live_server.url + _reset_path())
    expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
    page.get_by_label("New password", exact=True).fill(NEW)
    page.get_by_label("New password confirmation").fill(NEW + "x")
    page.get_by_role("button", name="Set new password").click()
    expect(page.locator("#id_new_password2_error")).to_contain_text("didn")
    page.screenshot(path=artifacts / "33-password-reset-confirm-error.png", full_page=True)

    page.get_by_label("New password", exact=True).fill(NEW)
    page.get_by_label("New password confirmation").fill(NEW)
    page.get_by_role("button", name="Set new password").click()
    expect(page.get_by_role("heading", name="Password changed")).to_be_visible()
    page.screenshot(path=artifacts / "34-password-reset-complete.png", full_page=True)

    page.get_by_role("link", name="Log in").last.click()
    page.get_by_label("Username").fill("dora")
    page.get_by_label("Password").fill(NEW)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")

    page.goto(f"{live_server.url}/account/")
    page.screenshot(path=artifacts / "36-account-change-password-link.png")
    page.get_by_role("link", name="Change password").click()
    expect(page.get_by_role("heading", name="Change password")).to_be_visible()
    page.screenshot(path=artifacts / "35-password-change.png", full_page=True)
