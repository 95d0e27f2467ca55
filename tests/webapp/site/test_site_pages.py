"""Browser checks beyond the main flow: validation messages, live dashboard, isolation, account, phone, dark."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from playwright.sync_api import expect
from skimage import data as skdata

from tests.helpers.images import encode
from tests.webapp.conftest import api_client_for, drain, post_job
from tests.webapp.site.conftest import log_in
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = {"username": "alice", "password": "alice-pass-123"}
BOB = {"username": "bob", "password": "bob-pass-123"}


def test_invalid_target_shows_message_next_to_field_and_keeps_source(
    page, live_server, funded_user, astronaut_files, tmp_path, artifacts
):
    source_path, _ = astronaut_files
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/new/")
    page.locator("#id_source").set_input_files(source_path)
    source_preview = page.get_by_alt_text("Face to use: preview of the chosen file")
    expect(source_preview).to_be_visible()
    target_error = page.locator("#target-field .field-error")

    # A text file is caught in the browser, before anything is uploaded.
    notes = tmp_path / "notes.txt"
    notes.write_text("not a photo")
    page.locator("#id_target").set_input_files(notes)
    expect(target_error).to_contain_text("is not a JPEG, PNG, WebP, HEIC or AVIF photo")
    expect(page.get_by_role("button", name="Swap faces")).to_be_disabled()  # as for a bad face photo
    expect(page.locator("#id_target")).to_have_attribute("aria-invalid", "true")
    expect(source_preview).to_be_visible()

    # A text file named .jpg passes the browser's check; the server's check of the file refuses it
    # next to the field, before anything is submitted.
    fake = tmp_path / "holiday.jpg"
    fake.write_text("still not a photo")
    page.locator("#id_target").set_input_files(fake)
    page.locator("#consent").check()
    expect(target_error).not_to_be_empty()
    expect(page.get_by_role("button", name="Swap faces")).to_be_disabled()
    expect(page.locator("#source-field .field-error")).to_be_empty()
    expect(source_preview).to_be_visible()
    assert page.eval_on_selector("#id_source", "input => input.files.length") == 1
    assert page.eval_on_selector("#id_source", "input => input.files[0].name") == source_path.name
    assert page.url.endswith("/jobs/new/")
    assert not Job.objects.exists()
    page.screenshot(path=artifacts / "10-validation-error.png", full_page=True)


def test_dashboard_follows_a_job_live_and_other_users_get_404(
    new_page, live_server, funded_user, user_b, astronaut_pair, artifacts
):
    source, target, _ = astronaut_pair
    created = post_job(api_client_for(funded_user), source, target, mode="standard")
    assert created.status_code == 201, created.content
    job_id = created.json()["id"]
    no_face = post_job(api_client_for(funded_user), source, encode(skdata.coffee(), "JPEG"), mode="fast")
    failing_id = no_face.json()["id"]

    page = new_page()
    log_in(page, live_server, **ALICE)
    card = page.locator(f"#job-{job_id}")
    expect(card).to_have_attribute("data-terminal", "false")
    expect(card.get_by_role("progressbar")).to_be_visible()
    page.screenshot(path=artifacts / "11-dashboard-waiting.png", full_page=True)
    page.evaluate("window.__sameDocument = true")

    drain()
    expect(card).to_have_attribute("data-state", "succeeded", timeout=30_000)
    expect(card.get_by_text("Done")).to_be_visible()
    expect(card.get_by_text("Paid", exact=True)).to_be_visible()
    failed = page.locator(f"#job-{failing_id}")
    expect(failed).to_have_attribute("data-state", re.compile("^(failed|rejected)$"))  # the reason is shown
    expect(failed.locator(".job-error")).to_contain_text(
        re.compile(r"^(Failed|Not processed): .+Nothing was charged")
    )
    assert page.evaluate("window.__sameDocument === true"), (
        "the dashboard reloaded instead of updating in place"
    )
    page.screenshot(path=artifacts / "12-dashboard-live-done.png", full_page=True)

    other = new_page()
    log_in(other, live_server, **BOB)
    for path in (f"/jobs/{job_id}/", f"/jobs/{job_id}/status.json"):
        response = other.goto(f"{live_server.url}{path}")
        assert response.status == 404, path
    expect(other.locator("body")).not_to_contain_text("AI-generated swap")
    response = other.request.post(f"{live_server.url}/jobs/{job_id}/delete")
    assert response.status in (403, 404)  # no CSRF token, and not theirs either way
    assert Job.objects.filter(id=job_id).exists()


def test_account_shows_credit_history_and_manages_tokens(page, live_server, funded_user, artifacts):
    log_in(page, live_server, **ALICE)
    page.get_by_role("link", name="Account").click()
    expect(page.locator("#available")).to_have_text("1000.00")
    expect(page.get_by_role("table")).to_contain_text("Credits added")

    page.get_by_label("Name").fill("iOS app")
    page.get_by_role("button", name="Create token").click()
    key = page.get_by_label("New API token").input_value()
    assert key.startswith("vsg_")
    expect(page.locator(".token-list")).to_contain_text("iOS app")
    expect(page.locator(".token-list")).to_contain_text(key[:10])
    page.screenshot(path=artifacts / "13-account-token.png", full_page=True)

    page.reload()  # the key is shown once
    expect(page.get_by_label("New API token")).to_have_count(0)
    assert key not in page.content()

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke iOS app").click()
    expect(page.get_by_text("Revoked the token")).to_be_visible()
    expect(page.locator(".token-list")).to_have_count(0)


def test_phone_sized_and_dark_mode(new_page, live_server, funded_user, astronaut_files, artifacts):
    source_path, target_path = astronaut_files
    phone = new_page(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, device_scale_factor=2
    )
    log_in(phone, live_server, **ALICE)
    phone.goto(f"{live_server.url}/jobs/new/")
    phone.locator("#id_source").set_input_files(source_path)
    phone.locator("#id_target").set_input_files(target_path)
    expect(phone.get_by_role("button", name=re.compile("Replace face 1"))).to_be_visible()
    overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the upload page scrolls sideways by {overflow}px on a phone"
    phone.screenshot(path=artifacts / "20-phone-upload.png", full_page=True)
    phone.goto(f"{live_server.url}/account/")
    assert phone.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    phone.screenshot(path=artifacts / "21-phone-account.png", full_page=True)

    dark = new_page(color_scheme="dark")
    log_in(dark, live_server, **ALICE)
    dark.goto(f"{live_server.url}/jobs/new/")
    dark.locator("#id_source").set_input_files(source_path)
    dark.locator("#id_target").set_input_files(target_path)
    expect(dark.get_by_role("button", name=re.compile("Replace face 1"))).to_be_visible()
    background = dark.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(15, 17, 23)", background
    dark.screenshot(path=artifacts / "22-dark-upload.png", full_page=True)


def test_keyboard_can_reach_the_upload_controls(page, live_server, funded_user):
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/new/")
    focused = []
    for _ in range(14):
        page.keyboard.press("Tab")
        focused.append(
            page.evaluate(
                "document.activeElement.id || document.activeElement.name || document.activeElement.textContent.trim()"
            )
        )
    assert "id_source" in focused and "id_target" in focused, focused
    assert "faces" in focused and "mode" in focused and "resolution" in focused, focused


@pytest.mark.parametrize("since", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"])
def test_the_gallerys_live_status_refuses_a_time_out_of_range(user_a, since):
    """Both ends of the calendar shifted by a time zone fall outside it in UTC: a 500 on SQLite."""
    client = Client(raise_request_exception=False)
    client.force_login(user_a)
    response = client.get("/jobs/status.json", {"since": since})
    assert response.status_code == 400 and "since" in response.json()["error"]
