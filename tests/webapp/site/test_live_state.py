"""One live state source: the job page's every state element and the gallery follow the database,
including jobs created elsewhere (the API, another tab) and deleted elsewhere."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import api_client_for, post_job
from tests.webapp.site.conftest import log_in
from webapp.jobs.states import transition
from webapp.site.presentation import STATE_LABELS

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = {"username": "alice", "password": "alice-pass-123"}


def test_job_page_says_one_state_everywhere(page, live_server, funded_user, astronaut_pair, artifacts):
    source, target, _ = astronaut_pair
    job_id = post_job(api_client_for(funded_user), source, target).json()["id"]
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/{job_id}/")
    page.evaluate("window.__sameDocument = true")
    badge, details = page.locator("#state-badge"), page.locator("#state-text")
    # A worker would move the job; here it moves by the same guarded transitions, whose events
    # (SSE) the page follows.
    previous = "created"
    for state, progress in (("screening", 0), ("review", 0), ("queued", 0), ("running", 40)):
        assert transition(job_id, from_states=[previous], to_state=state, progress=progress)
        previous = state
        label = STATE_LABELS[state]
        expect(badge).to_have_text(label)
        expect(details).to_have_text(label)
        expect(badge).to_have_class(f"badge badge-{state}")
    expect(page.locator("#job-progress")).to_have_attribute("aria-valuenow", "40")
    expect(page.locator("#job-status")).to_contain_text("40%")
    assert page.evaluate("window.__sameDocument === true")
    page.screenshot(path=artifacts / "31-job-running-one-state.png", full_page=True)


def test_gallery_shows_jobs_created_and_deleted_elsewhere_without_reload(
    new_page, live_server, funded_user, astronaut_pair, artifacts
):
    source, target, _ = astronaut_pair
    page = new_page()
    log_in(page, live_server, **ALICE)
    expect(page.get_by_role("heading", name="No swaps yet")).to_be_visible()
    page.evaluate("window.__sameDocument = true")

    api = api_client_for(funded_user)
    first = post_job(api, source, target).json()["id"]
    card = page.locator(f"#job-{first}")
    expect(card).to_be_visible(timeout=15_000)
    expect(page.get_by_role("heading", name="No swaps yet")).to_be_hidden()

    # Another tab starts one too; it lands first (newest first).
    other = new_page()
    log_in(other, live_server, **ALICE)
    second = post_job(api, source, target).json()["id"]
    expect(page.locator(f"#job-{second}")).to_be_visible(timeout=15_000)
    ids = page.locator(".job-card").evaluate_all("cards => cards.map(c => c.dataset.jobId)")
    assert ids == [second, first], ids
    expect(card).to_have_attribute("data-state", "created")
    assert transition(first, from_states=["created"], to_state="running", progress=30)
    expect(card.get_by_role("progressbar")).to_have_attribute("aria-valuenow", "30", timeout=15_000)
    expect(card.locator(".badge")).to_have_text("Processing")
    page.screenshot(path=artifacts / "32-gallery-live-new.png", full_page=True)

    # Deleted in the other tab (or by the API): the card goes.
    assert api.delete(f"/api/v1/jobs/{second}").status_code == 204
    expect(page.locator(f"#job-{second}")).to_have_count(0, timeout=15_000)
    assert page.evaluate("window.__sameDocument === true"), "the gallery reloaded instead of updating"
