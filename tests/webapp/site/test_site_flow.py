"""The site in a real browser: sign up, upload the astronaut pair, watch it finish, download, delete."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import drain
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)

# Records every value the job page's progress bar shows, across the reload that reveals the result.
RECORD_PROGRESS = """
(() => {
  const record = () => {
    const bar = document.getElementById("job-progress");
    if (!bar) return;
    const push = () => {
      const seen = JSON.parse(sessionStorage.getItem("progress") || "[]");
      seen.push(Number(bar.getAttribute("aria-valuenow")));
      sessionStorage.setItem("progress", JSON.stringify(seen));
    };
    push();
    new MutationObserver(push).observe(bar, { attributes: true, attributeFilter: ["aria-valuenow"] });
  };
  document.addEventListener("DOMContentLoaded", record);
})();
"""


def test_sign_up_upload_watch_download_delete(page, live_server, astronaut_files, artifacts):
    source_path, target_path = astronaut_files
    page.add_init_script(RECORD_PROGRESS)

    # Sign up: new accounts get starting credit and land on the upload page.
    page.goto(f"{live_server.url}/signup/")
    page.get_by_label("Username").fill("carol")
    page.get_by_label("Email").fill("carol@example.com")
    page.get_by_label("Password", exact=True).fill("a-long-pass-phrase-1")
    page.get_by_label("Password confirmation").fill("a-long-pass-phrase-1")
    page.screenshot(path=artifacts / "01-signup.png", full_page=True)
    page.get_by_role("button", name="Sign up").click()
    page.wait_for_url(f"{live_server.url}/jobs/new/")
    expect(page.get_by_role("status").first).to_contain_text("free credit")

    # Log out and back in, as a returning user would.
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r"/login/"))
    page.get_by_label("Username").fill("carol")
    page.get_by_label("Password").fill("a-long-pass-phrase-1")
    page.screenshot(path=artifacts / "02-login.png", full_page=True)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.get_by_role("heading", name="No swaps yet")).to_be_visible()
    page.screenshot(path=artifacts / "03-dashboard-empty.png", full_page=True)

    # Upload: both previews, the target's face found as a clickable box, a live quote.
    page.get_by_role("link", name="New swap").click()
    page.locator("#id_source").set_input_files(source_path)
    page.locator("#id_target").set_input_files(target_path)
    expect(page.get_by_alt_text("Face to use: preview of the chosen file")).to_be_visible()
    face = page.get_by_role("button", name=re.compile(r"Replace face 1"))
    expect(face).to_be_visible()
    expect(page.locator("#quote-amount")).to_have_text(re.compile(r"^\d+\.\d\d credits$"))
    face.click()
    expect(face).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#face_index")).to_have_value("0")
    page.get_by_role("radio", name="Fast").check()
    # Without the consent statement nothing is uploaded: the API's 422 shows next to the box.
    consent = page.locator("#consent")
    expect(consent).not_to_be_checked()
    page.get_by_role("button", name="Swap faces").click()
    expect(page.locator("#consent-error")).to_contain_text("right to use the face")
    assert not Job.objects.exists()
    consent.check()
    expect(page.locator("#quote-note")).not_to_have_text("Pricing…")
    shown_price = page.locator("#quote-amount").get_attribute("data-amount")
    page.screenshot(path=artifacts / "04-upload-ready.png", full_page=True)
    page.get_by_role("button", name="Swap faces").click()
    page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
    job = Job.objects.get()
    assert job.consent_channel == "site" and job.consent_at is not None
    assert (job.mode, job.faces, job.face_index) == ("fast", "one", 0)
    assert job.quote["amount"] == shown_price  # the price the page showed is the job's price
    expect(page.get_by_role("progressbar")).to_be_visible()
    page.screenshot(path=artifacts / "05-job-submitted.png", full_page=True)

    # A real worker runs the job while the page polls; the bar reaches 100 and the result appears.
    drain()
    result = page.get_by_alt_text("The swapped photo (AI-generated)")
    expect(result).to_be_visible(timeout=30_000)
    page.wait_for_function("document.getElementById('result-image').naturalWidth > 0")
    seen = page.evaluate("JSON.parse(sessionStorage.getItem('progress') || '[]')")
    assert seen and seen[-1] == 100 and seen == sorted(seen), seen
    expect(page.get_by_text("AI-generated", exact=True)).to_be_visible()
    expect(page.locator("#state-badge")).to_have_text("Done")
    slider = page.get_by_role("slider", name=re.compile("Before and after"))
    slider.focus()
    page.keyboard.press("ArrowLeft")
    expect(slider).not_to_have_value("50")
    page.screenshot(path=artifacts / "06-result.png", full_page=True)

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download").click()
    download = download_info.value
    assert download.suggested_filename == f"visage-{job.id}.jpg" or download.suggested_filename.startswith(
        "visage-"
    )
    assert download.path().stat().st_size > 1000
    # What the user downloads is the marked file with Content Credentials naming this job.
    from webapp.media import provenance

    credentials = provenance.read(download.path(), media_type="image/jpeg")
    assert credentials.validation_state == "Trusted", credentials.failures
    assert credentials.summary()["content_id"] == str(job.id)

    # The dashboard card shows it done, with the cost.
    page.get_by_role("link", name="Swaps", exact=True).click()
    card = page.locator(f"#job-{job.id}")
    expect(card).to_have_attribute("data-state", "succeeded")
    expect(card.get_by_text("Paid", exact=True)).to_be_visible()
    page.screenshot(path=artifacts / "07-dashboard-done.png", full_page=True)

    # Delete from the result page (after confirming), back to an empty dashboard.
    card.get_by_role("link", name=re.compile("swap")).click()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete").click()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.get_by_text("Deleted the swap")).to_be_visible()
    expect(page.get_by_role("heading", name="No swaps yet")).to_be_visible()
    assert not Job.objects.exists()
    page.screenshot(path=artifacts / "08-deleted.png", full_page=True)

    # Consent is given per upload: the next upload form starts with the box unticked again.
    page.get_by_role("link", name="New swap").click()
    expect(page.locator("#consent")).not_to_be_checked()
