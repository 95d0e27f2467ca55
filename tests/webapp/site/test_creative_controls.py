"""Creative controls on the upload page: match a person (faces=reference) and a different photo for
each face (face_sources), picked on the target photo, sent to the API as it documents them."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.images import encode
from tests.webapp.conftest import api_client_for, two_face_target
from tests.webapp.site.conftest import log_in
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = {"username": "alice", "password": "alice-pass-123"}


@pytest.fixture
def group_files(tmp_path, astronaut_rgb):
    """Two face photos (named so the page's choices can be told apart) and a two-face target."""
    first, second = tmp_path / "first.png", tmp_path / "second.png"
    first.write_bytes(encode(astronaut_rgb.copy()))
    second.write_bytes(encode(astronaut_rgb[:, ::-1].copy()))
    target = tmp_path / "two.jpg"
    target.write_bytes(two_face_target(astronaut_rgb))
    return [first, second], target


def choose(page, live_server, sources, target):
    page.goto(f"{live_server.url}/jobs/new/")
    page.locator("#id_source").set_input_files(sources)
    page.locator("#id_target").set_input_files(target)
    expect(page.locator(".face-box")).to_have_count(2)
    page.get_by_role("radio", name="Fast").check()
    page.locator("#consent").check()


def submitted_job(page) -> Job:
    page.get_by_role("button", name="Swap faces").click()
    page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
    return Job.objects.order_by("-created_at").first()


def test_match_a_person_picked_on_the_photo(page, live_server, funded_user, group_files, artifacts):
    sources, target = group_files
    log_in(page, live_server, **ALICE)
    choose(page, live_server, sources[:1], target)
    status = page.locator("#faces-status")
    match = page.get_by_role("radio", name="Everyone who looks like a face you pick")
    expect(match).to_be_visible()
    # One photo of the face: "a different photo for each face" makes no sense yet.
    expect(page.get_by_role("radio", name="A different photo for each face")).to_be_hidden()

    match.check()
    expect(status).to_contain_text("Click the person to match")
    # Submitting before picking the person says so next to the faces; nothing is created.
    page.get_by_role("button", name="Swap faces").click()
    expect(page.locator("#faces-error")).to_contain_text("Click the person to match")
    assert Job.objects.count() == 0

    person = page.get_by_role("button", name="Match everyone who looks like face 2")
    person.click()
    expect(person).to_have_attribute("aria-pressed", "true")
    expect(status).to_contain_text("Everyone who looks like face 2 will be replaced")
    page.screenshot(path=artifacts / "60-upload-match-a-person.png", full_page=True)
    job = submitted_job(page)
    assert (job.faces, job.reference_face_index, job.face_index, job.face_sources) == ("reference", 1, None, [])


def test_a_face_clicked_first_becomes_the_person_to_match(page, live_server, funded_user, group_files):
    sources, target = group_files
    log_in(page, live_server, **ALICE)
    choose(page, live_server, sources[:1], target)
    page.get_by_role("button", name="Replace face 2").click()
    page.get_by_role("radio", name="Everyone who looks like a face you pick").check()
    expect(page.get_by_role("button", name="Match everyone who looks like face 2")).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(page.locator("#face_index")).to_have_value("")
    expect(page.locator("#reference_face_index")).to_have_value("1")


def test_a_different_photo_for_each_face(page, live_server, funded_user, group_files, artifacts):
    sources, target = group_files
    log_in(page, live_server, **ALICE)
    choose(page, live_server, sources, target)
    page.get_by_role("radio", name="A different photo for each face").check()

    # Each face starts with the photo of its number; the boxes on the photo say so.
    face1 = page.get_by_label("Photo for face 1")
    face2 = page.get_by_label("Photo for face 2")
    expect(face1).to_have_value("0")
    expect(face2).to_have_value("1")
    expect(page.locator(".face-box").nth(0)).to_have_text("1 ← 1")
    expect(page.locator(".face-box").nth(1)).to_have_text("2 ← 2")

    # Clicking a face on the photo moves it to the next photo; a face can be kept as it is.
    page.get_by_role("button", name=re.compile(r"^Face 1: photo 1")).click()
    expect(face1).to_have_value("1")
    expect(page.locator(".face-box").nth(0)).to_have_text("1 ← 2")
    face2.select_option(label="Keep this face")
    expect(page.get_by_role("button", name=re.compile(r"^Face 2: kept"))).to_have_attribute("aria-pressed", "false")
    page.screenshot(path=artifacts / "61-upload-photo-for-each-face.png", full_page=True)

    # Keeping every face is not a swap: said before anything is sent.
    face1.select_option(label="Keep this face")
    page.get_by_role("button", name="Swap faces").click()
    expect(page.locator("#faces-error")).to_contain_text("Choose a photo for at least one face")
    assert Job.objects.count() == 0

    face1.select_option(label="Photo 2 · second.png")
    job = submitted_job(page)
    assert job.face_sources == [{"face": 0, "source": 1}]
    assert (job.faces, job.face_index, job.reference_face_index) == ("one", None, None)
    assert api_client_for(funded_user).get(f"/api/v1/jobs/{job.id}").json()["source"]["photos"] == 2


def test_the_map_follows_the_photos_chosen(page, live_server, funded_user, group_files):
    """Removing the second photo leaves one: the choice goes away and the largest face is chosen."""
    sources, target = group_files
    log_in(page, live_server, **ALICE)
    choose(page, live_server, sources, target)
    each = page.get_by_role("radio", name="A different photo for each face")
    each.check()
    expect(page.get_by_label("Photo for face 1")).to_be_visible()
    page.get_by_role("button", name="Remove face photo 2 (second.png)").click()
    expect(each).to_be_hidden()
    expect(page.get_by_role("radio", name="The largest face")).to_be_checked()
    expect(page.locator("#face-map")).to_be_hidden()
    expect(page.locator(".face-box").nth(0)).to_have_text("1")
