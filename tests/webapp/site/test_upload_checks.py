"""The upload page: the picked face is the one selected choice, drop zones read clearly on desktop and
phone, and a face photo or target without a usable face is said at once with the Swap button off."""

from __future__ import annotations

import re

import cv2
import pytest
from playwright.sync_api import expect
from skimage import data as skdata

from tests.helpers.images import encode
from tests.webapp.site.conftest import log_in
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = {"username": "alice", "password": "alice-pass-123"}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


def test_picked_face_is_the_selected_choice(page, live_server, funded_user, astronaut_files, artifacts):
    source_path, target_path = astronaut_files
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/new/")
    page.locator("#id_source").set_input_files(source_path)
    page.locator("#id_target").set_input_files(target_path)
    face = page.get_by_role("button", name=re.compile("Replace face 1"))
    largest = page.get_by_role("radio", name="The largest face")
    expect(largest).to_be_checked()
    face.click()
    picked = page.get_by_role("radio", name="Face 1, picked on the photo")
    expect(picked).to_be_checked()
    expect(largest).not_to_be_checked()
    expect(face).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#face_index")).to_have_value("0")
    # A face box is a comfortable tap target.
    box = face.bounding_box()
    assert box["width"] >= 44 and box["height"] >= 44, box
    page.screenshot(path=artifacts / "40-upload-face-picked.png", full_page=True)

    largest.check()
    expect(picked).to_be_hidden()
    expect(face).to_have_attribute("aria-pressed", "false")
    expect(page.locator("#face_index")).to_have_value("")


def _lines(page, field: str) -> dict:
    return page.evaluate(
        """(field) => {
          const zone = document.querySelector(`#${field}-field .dropzone`);
          const visible = [...zone.children].filter(el => el.getClientRects().length && getComputedStyle(el).display !== "none");
          return {display: getComputedStyle(zone).display,
                  parts: visible.map(el => ({text: el.textContent.trim(), rect: el.getBoundingClientRect().toJSON()}))};
        }""",
        field,
    )


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_drop_zone_reads_as_separate_lines(new_page, live_server, funded_user, artifacts, device):
    page = new_page(**(PHONE if device == "phone" else {}))
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/new/")
    for field in ("source", "target"):
        zone = _lines(page, field)
        assert zone["display"] == "flex", zone
        icon, title, sub = zone["parts"]
        # Icon above the title above the hint, each centred: nothing runs together or floats.
        assert icon["rect"]["bottom"] <= title["rect"]["top"] + 1 and title["rect"]["bottom"] <= sub["rect"]["top"] + 1, zone
        centres = [p["rect"]["x"] + p["rect"]["width"] / 2 for p in (icon, title, sub)]
        assert max(centres) - min(centres) <= 2, zone
        if device == "phone":
            assert "Drop" not in sub["text"] and sub["text"].startswith("Tap to choose"), sub
        else:
            assert sub["text"].startswith("Drop"), sub
    # Viewport only: a full-page capture resizes the emulated screen and drops the touch emulation.
    page.screenshot(path=artifacts / f"41-upload-dropzones-{device}.png")


def test_face_problems_are_said_before_submit(page, live_server, funded_user, astronaut_files, tmp_path, artifacts):
    source_path, target_path = astronaut_files
    coffee = tmp_path / "coffee.jpg"
    coffee.write_bytes(encode(skdata.coffee(), "JPEG"))
    tiny_face = tmp_path / "far-away.png"  # the astronaut at 170 px: her face is found, ~35 px across
    tiny_face.write_bytes(encode(cv2.resize(skdata.astronaut(), (170, 170), interpolation=cv2.INTER_AREA)))
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/new/")
    swap = page.get_by_role("button", name="Swap faces")
    source_error = page.locator("#source-field .field-error")

    page.locator("#id_target").set_input_files(target_path)
    page.locator("#id_source").set_input_files(coffee)
    expect(source_error).to_contain_text("couldn’t find a face in “coffee.jpg”")
    expect(swap).to_be_disabled()
    expect(page.locator("#submit-reason")).to_contain_text("Swap is off")
    page.screenshot(path=artifacts / "42-upload-no-face.png", full_page=True)

    page.locator("#id_source").set_input_files(tiny_face)
    page.get_by_role("button", name=re.compile("Remove face photo 1")).click()
    expect(source_error).to_contain_text("too small")
    expect(swap).to_be_disabled()

    page.get_by_role("button", name=re.compile("Remove face photo 1")).click()
    page.locator("#id_source").set_input_files(source_path)
    expect(source_error).to_be_empty()
    expect(swap).to_be_enabled()
    expect(page.locator("#submit-reason")).to_be_empty()

    # A target without a face: said next to the target, Swap off again.
    page.locator("#id_target").set_input_files(coffee)
    expect(page.locator("#target-field .field-error")).to_contain_text("couldn’t find a face")
    expect(swap).to_be_disabled()
    assert not Job.objects.exists()


def test_phone_keeps_price_and_swap_in_reach(new_page, live_server, funded_user, astronaut_files, artifacts):
    source_path, target_path = astronaut_files
    page = new_page(**PHONE)
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/new/")
    page.locator("#id_source").set_input_files(source_path)
    page.locator("#id_target").set_input_files(target_path)
    expect(page.locator("#quote-amount")).to_have_text(re.compile(r"^\d+\.\d\d \w+$"))
    assert page.evaluate("document.documentElement.scrollHeight") > 844  # the page itself is long
    for selector in ("#submit-swap", "#quote-amount"):
        box = page.locator(selector).bounding_box()  # without scrolling
        assert box and 0 <= box["y"] and box["y"] + box["height"] <= 844, (selector, box)
    # Scrolled to the very end, the bar hides nothing: the last control sits above it.
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    bar_top = page.locator("#summary-bar").bounding_box()["y"]
    last = page.get_by_role("radio", name="Original").locator("..").bounding_box()
    assert last["y"] + last["height"] <= bar_top, (last, bar_top)
    page.screenshot(path=artifacts / "43-phone-summary-bar.png")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, overflow


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_a_bad_target_turns_swap_off_like_a_bad_face_photo(new_page, live_server, funded_user, astronaut_files, tmp_path,
                                                           artifacts, device):
    source_path, target_path = astronaut_files
    broken = tmp_path / "broken.jpg"  # a JPEG's first bytes, then nothing a decoder can read
    broken.write_bytes(b"\xff\xd8\xff\xe0" + b"\x00not really a photo" * 64)
    notes = tmp_path / "notes.txt"
    notes.write_text("not a photo")
    page = new_page(**(PHONE if device == "phone" else {"viewport": {"width": 1366, "height": 900}}))
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/new/")
    swap = page.get_by_role("button", name="Swap faces")
    target_error = page.locator("#target-field .field-error")
    page.locator("#id_source").set_input_files(source_path)

    page.locator("#id_target").set_input_files(broken)  # refused by the server's check
    expect(target_error).not_to_be_empty()
    expect(swap).to_be_disabled()
    expect(page.locator("#submit-reason")).to_contain_text("Swap is off")
    page.screenshot(path=artifacts / f"43-upload-bad-target-{device}.png")

    page.locator("#id_target").set_input_files(target_path)  # a good one turns it back on
    expect(swap).to_be_enabled()
    expect(page.locator("#submit-reason")).to_be_empty()

    page.locator("#id_target").set_input_files(notes)  # refused in the browser (not a photo or video)
    expect(target_error).not_to_be_empty()
    expect(swap).to_be_disabled()
    assert not Job.objects.exists()
