"""Several photos of the same face on the upload page: pick, drop, remove, limits, and the job they make."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.images import encode
from tests.webapp.conftest import api_client_for
from tests.webapp.site.conftest import log_in
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = {"username": "alice", "password": "alice-pass-123"}

# Drops `count` copies of the first thumbnail's photo (as new files) on the source field.
DROP_PHOTOS = """
async (count) => {
  const blob = await (await fetch(document.querySelector("#source-field .thumb img").src)).blob();
  const files = new DataTransfer();
  for (let i = 1; i <= count; i++) files.items.add(new File([blob], `dropped-${i}.png`, { type: "image/png" }));
  const zone = document.getElementById("source-field");
  zone.dispatchEvent(new DragEvent("drop", { dataTransfer: files, bubbles: true, cancelable: true }));
}
"""


def test_several_source_photos(
    page, live_server, funded_user, astronaut_pair, astronaut_rgb, tmp_path, artifacts
):
    _, target, _ = astronaut_pair
    faces = []
    for i, rgb in enumerate([astronaut_rgb, astronaut_rgb[:, ::-1], astronaut_rgb[20:, 10:]], 1):
        path = tmp_path / f"face-{i}.png"
        path.write_bytes(encode(rgb.copy()))
        faces.append(path)
    target_path = tmp_path / "group.jpg"
    target_path.write_bytes(target)

    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/new/")
    expect(page.locator("#source-hint")).to_contain_text(
        "Add up to 5 photos of the same person for a better likeness."
    )
    thumbs = page.locator("#source-field .thumb:not(.thumb-add)")
    source_error = page.locator("#source-field .field-error")

    # Three photos from one pick: the first shown large, all three as removable thumbnails.
    page.locator("#id_source").set_input_files(faces)
    page.locator("#id_target").set_input_files(target_path)
    expect(page.get_by_alt_text("Face to use: preview of the chosen file")).to_be_visible()
    expect(thumbs).to_have_count(3)
    expect(page.locator("#source-field [data-role='file-name']")).to_contain_text("3 photos of the face")
    expect(page.get_by_role("button", name=re.compile(r"Replace face 1"))).to_be_visible()
    page.wait_for_function(
        "[...document.querySelectorAll('#source-field .thumb img')].every(i => i.complete && i.naturalWidth)"
    )
    page.screenshot(path=artifacts / "09-upload-three-sources.png", full_page=True)

    # Remove the second; picking again adds to the chosen photos instead of replacing them.
    page.get_by_role("button", name="Remove face photo 2 (face-2.png)").click()
    expect(thumbs).to_have_count(2)
    names = "input => [...input.files].map(f => f.name)"
    assert page.eval_on_selector("#id_source", names) == ["face-1.png", "face-3.png"]

    # Dropping four more goes past the limit of five: the fifth is kept, the rest left out, said why.
    page.evaluate(DROP_PHOTOS, 4)
    expect(thumbs).to_have_count(5)
    expect(source_error).to_contain_text("up to 5 photos of the same person; 1 was left out")
    expect(page.locator("#source-field .thumb-add")).to_have_count(0)
    for _ in range(3):
        page.locator("#source-field .thumb-remove").last.click()
    expect(thumbs).to_have_count(2)
    expect(source_error).to_be_empty()

    # A file that is not a photo is refused next to the field; the two photos stay.
    notes = tmp_path / "notes.txt"
    notes.write_text("not a photo")
    page.locator("#id_source").set_input_files(notes)
    expect(source_error).to_contain_text("is not a JPEG, PNG, WebP, HEIC or AVIF photo")
    expect(thumbs).to_have_count(2)
    assert page.eval_on_selector("#id_source", names) == ["face-1.png", "face-3.png"]

    # The submit sends both photos as a repeated `source`.
    page.get_by_role("radio", name="Fast").check()
    page.locator("#consent").check()
    page.get_by_role("button", name="Swap faces").click()
    page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
    job = Job.objects.get()
    assert api_client_for(funded_user).get(f"/api/v1/jobs/{job.id}").json()["source"]["photos"] == 2
    expect(page.get_by_text("2 source photos")).to_be_visible()
