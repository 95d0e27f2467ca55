"""The moderator's desk in a browser: large images, keyboard shortcuts, a note before a decision."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.moderation.conftest import moderator, nsfw_models  # noqa: F401  (fixtures)
from tests.webapp.conftest import drain, post_job
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


def test_desk_keyboard_and_note(page, live_server, api_a, astronaut_pair, nsfw_models, settings, moderator, artifacts):  # noqa: F811 - the fixtures imported above
    settings.VISAGE_NSFW_MODEL = str(nsfw_models["review"])
    source, target, _ = astronaut_pair
    ids = [post_job(api_a, source, target).json()["id"] for _ in range(2)]
    drain(["moderation"])
    assert set(Job.objects.values_list("state", flat=True)) == {"review"}

    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/admin/login/")
    page.get_by_label("Username").fill("mod")
    page.get_by_label("Password").fill("mod-pass-123")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#pending-review")).to_have_text("2 awaiting review")
    expect(page.locator("#site-name")).to_have_text("Visage administration")
    page.screenshot(path=artifacts / "70-admin-index.png")

    page.locator("#pending-review").click()
    page.wait_for_url("**/admin/webapp/job/?queue=review")
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(2, timeout=20_000)
    page.screenshot(path=artifacts / "71-admin-review-queue.png")
    heights = rows.evaluate_all("rows => rows.map(r => r.getBoundingClientRect().height)")
    assert max(heights) <= 80, heights  # one compact line per job

    page.goto(f"{live_server.url}/admin/webapp/job/{ids[0]}/change/")
    images = page.locator(".desk-images img")
    expect(images).to_have_count(2)
    page.wait_for_function("[...document.querySelectorAll('.desk-images img')].every(i => i.complete && i.naturalWidth > 0)")
    assert all(box["width"] >= 250 for box in images.evaluate_all("imgs => imgs.map(i => i.getBoundingClientRect().toJSON())"))
    page.screenshot(path=artifacts / "72-admin-desk.png", full_page=True)

    # "r" without a note does not decide: it asks for the note.
    page.keyboard.press("r")
    expect(page.locator("#desk-note")).to_be_focused()
    assert Job.objects.get(id=ids[0]).state == "review"
    page.locator("#desk-note").fill("nudity")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("r")
    page.wait_for_url(f"**/admin/webapp/job/{ids[1]}/change/")
    assert Job.objects.get(id=ids[0]).state == "rejected"
    expect(page.locator(".messagelist")).to_contain_text("Rejected job")
    expect(page.locator("#desk-history")).to_contain_text("1 rejected")
    page.keyboard.press("n")
    page.keyboard.type("a swimsuit: fine")
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url("**/admin/webapp/job/?queue=review")
    assert Job.objects.get(id=ids[1]).state == "queued"
    expect(page.locator("#pending-review")).to_have_text("0 awaiting review")
