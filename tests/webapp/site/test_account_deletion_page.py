"""Deleting the account in the browser (/account/delete/), in English and in Chinese: the account
page links to it, the page says what goes and what stays, a wrong password is said on the form,
the right one signs out and lands on the landing page with the confirmation."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from tests.webapp.site.conftest import log_in, stored_result_job

pytestmark = pytest.mark.django_db(transaction=True)


def test_deleting_the_account_in_the_browser(new_page, live_server, artifacts, funded_user):
    stored_result_job(funded_user, width=320, height=200)
    page = new_page()
    log_in(page, live_server, username="alice", password="alice-pass-123")
    page.goto(f"{live_server.url}/account/")
    page.screenshot(path=artifacts / "37-account-delete-link.png")
    page.get_by_role("link", name="Delete account").click()
    expect(page.get_by_role("heading", name="Delete account")).to_be_visible()
    expect(page.get_by_text("your 1 swap, with its photos, videos and result;")).to_be_visible()
    page.screenshot(path=artifacts / "38-account-delete.png", full_page=True)

    page.get_by_label("Your password").fill("not-it")
    page.get_by_role("button", name="Delete my account").click()
    expect(page.locator("#id_password_error")).to_be_visible()
    page.screenshot(path=artifacts / "39-account-delete-wrong-password.png", full_page=True)

    page.get_by_label("Your password").fill("alice-pass-123")
    page.get_by_role("button", name="Delete my account").click()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.get_by_text("Your account and everything stored for it were deleted.")).to_be_visible()
    page.screenshot(path=artifacts / "40-account-deleted.png")
    assert not get_user_model().objects.get(pk=funded_user.pk).is_active


def test_the_delete_page_in_chinese(new_page, live_server, artifacts, funded_user):
    page = new_page(locale="zh-CN", extra_http_headers={"Accept-Language": "zh-Hans"})
    page.goto(f"{live_server.url}/login/")
    page.locator("#id_username").fill("alice")
    page.locator("#id_password").fill("alice-pass-123")
    page.get_by_role("button", name="登录").click()
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/account/delete/")
    expect(page.get_by_role("heading", name="注销账户")).to_be_visible()
    expect(page.get_by_role("button", name="注销我的账户")).to_be_visible()
    page.screenshot(path=artifacts / "41-account-delete-zh.png", full_page=True)
