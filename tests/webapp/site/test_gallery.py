"""The gallery: small thumbnails (a page of 20 results weighs well under 1.5 MB), filters and pages."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone
from playwright.sync_api import expect

from tests.webapp.site.conftest import log_in, stored_result_job

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = {"username": "alice", "password": "alice-pass-123"}
MAX_GALLERY_BYTES = 1_500_000


def test_gallery_of_20_results_loads_thumbnails_not_full_images(page, live_server, funded_user, artifacts):
    # Big, noisy results (each full image is far heavier than its thumbnail).
    jobs = [
        stored_result_job(funded_user, width=1600, height=1000, face_box=(1100, 150, 1400, 500),
                          created_at=timezone.now() - timedelta(minutes=i))
        for i in range(20)
    ]
    full_sizes = [job.result_bytes for job in jobs]
    assert sum(full_sizes) > 3 * MAX_GALLERY_BYTES  # what the gallery used to load

    transferred: list[tuple[str, int]] = []
    page.on("requestfinished", lambda request: transferred.append((request.url, request.sizes()["responseBodySize"])))
    log_in(page, live_server, **ALICE)
    transferred.clear()
    page.reload()
    expect(page.locator(".job-card")).to_have_count(20)
    # Bring every lazily loaded card into view and wait until each picture has arrived.
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.wait_for_function(
        "[...document.querySelectorAll('.job-thumb img')].every(img => img.complete && img.naturalWidth > 0)"
    )
    page.evaluate("window.scrollTo(0, 0)")
    total = sum(size for _, size in transferred)
    assert total < MAX_GALLERY_BYTES, (total, sorted(transferred, key=lambda t: -t[1])[:5])
    shapes = page.locator(".job-thumb img").evaluate_all("imgs => imgs.map(i => [i.naturalWidth, i.naturalHeight])")
    assert all(max(w, h) <= 480 for w, h in shapes), shapes
    full = [url for url, _ in transferred if f"/{settings.S3_RESULTS_BUCKET}/" in url and ".thumb.webp" not in url]
    assert full == []  # no full-size result was loaded
    page.screenshot(path=artifacts / "60-gallery-20.png")


def test_gallery_filters_and_pages(page, live_server, funded_user, astronaut_pair, artifacts):
    from tests.webapp.conftest import api_client_for, post_job

    now = timezone.now()
    for i in range(26):
        stored_result_job(funded_user, width=320, height=200, face_box=(100, 40, 180, 140),
                          created_at=now - timedelta(days=3, minutes=i))
    source, target, _ = astronaut_pair
    waiting = post_job(api_client_for(funded_user), source, target).json()["id"]

    log_in(page, live_server, **ALICE)
    expect(page.locator(".job-card")).to_have_count(24)
    expect(page.get_by_text("Page 1 of 2")).to_be_visible()
    page.get_by_role("link", name="Older →").click()
    expect(page.locator(".job-card")).to_have_count(3)

    page.goto(f"{live_server.url}/")
    page.get_by_label("State").select_option(label="In progress")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator(".job-card")).to_have_count(1)
    expect(page.locator(f"#job-{waiting}")).to_be_visible()
    page.screenshot(path=artifacts / "61-gallery-filter-active.png")

    page.goto(f"{live_server.url}/?state=done&from={(now - timedelta(days=1)).date().isoformat()}")
    expect(page.get_by_role("heading", name="No swaps match")).to_be_visible()
    page.goto(f"{live_server.url}/?kind=video")
    expect(page.get_by_role("heading", name="No swaps match")).to_be_visible()
    page.goto(f"{live_server.url}/?kind=image&state=done")
    expect(page.locator(".job-card")).to_have_count(24)
