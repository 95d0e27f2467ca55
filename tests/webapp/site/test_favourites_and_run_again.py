"""Gallery favourites and name search on the dashboard, and "Run again" on the job page."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from billing import selectors as billing_selectors
from tests.webapp.conftest import api_client_for
from tests.webapp.site.conftest import stored_result_job
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client_a(funded_user) -> Client:
    client = Client()
    client.force_login(funded_user)
    return client


def submit(user, astronaut_pair, target_name: str = "target.jpg", **fields) -> Job:
    source, target, _ = astronaut_pair
    response = api_client_for(user).post(
        "/api/v1/jobs",
        {"source": SimpleUploadedFile("face.png", source), "target": SimpleUploadedFile(target_name, target),
         "consent": "true", **fields},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    return Job.objects.select_related("source", "target").get(id=response.json()["id"])


def card_ids(response) -> list[str]:
    return [str(card["job"]["id"]) for card in response.context["cards"]]


def said(response) -> str:
    return " ".join(str(m) for m in get_messages(response.wsgi_request))


# --- favourites and search -------------------------------------------------------------------------


def test_star_a_card_and_filter_the_gallery_to_favourites(client_a, funded_user):
    starred, plain = (stored_result_job(funded_user, width=320, height=200) for _ in range(2))
    gallery = client_a.get("/")
    assert gallery.content.decode().count('aria-label="Add to favourites"') == 2

    response = client_a.post(f"/jobs/{starred.id}/favourite", {"favourite": "1", "next": "/?state=done"})
    assert response.status_code == 302 and response["Location"] == "/?state=done"
    assert Job.objects.get(id=starred.id).favourite

    favourites = client_a.get("/?favourite=1")
    assert card_ids(favourites) == [str(starred.id)]
    assert 'aria-label="Remove from favourites"' in favourites.content.decode()
    assert set(card_ids(client_a.get("/"))) == {str(starred.id), str(plain.id)}

    client_a.post(f"/jobs/{starred.id}/favourite", {"favourite": "0", "next": "https://evil.example/"})
    assert not Job.objects.get(id=starred.id).favourite
    assert card_ids(client_a.get("/?favourite=1")) == []


def test_the_star_of_someone_elses_job_is_404(client_a, user_b):
    other = stored_result_job(user_b, width=320, height=200)
    assert client_a.post(f"/jobs/{other.id}/favourite", {"favourite": "1"}).status_code == 404
    assert not Job.objects.get(id=other.id).favourite


def test_search_the_gallery_by_the_file_name(client_a, funded_user, astronaut_pair):
    beach = submit(funded_user, astronaut_pair, "Beach-day.jpg")
    submit(funded_user, astronaut_pair, "wedding.jpg")
    stored_result_job(funded_user, width=320, height=200)  # made before names were kept

    found = client_a.get("/?q=beach")
    assert card_ids(found) == [str(beach.id)]
    html = found.content.decode()
    assert 'value="beach"' in html and "Beach-day.jpg" in html
    assert len(card_ids(client_a.get("/"))) == 3
    empty = client_a.get("/?q=holiday")
    assert card_ids(empty) == [] and "swaps made before names were kept have none" in empty.content.decode()


# --- run again -------------------------------------------------------------------------------------


def test_run_again_submits_the_same_originals_with_new_options_and_consent(client_a, funded_user, astronaut_pair):
    first = submit(funded_user, astronaut_pair, "party.jpg")  # still being screened: originals kept
    page = client_a.get(f"/jobs/{first.id}/").content.decode()
    assert 'id="run-again-submit"' in page

    response = client_a.post(
        f"/jobs/{first.id}/run-again", {"mode": "fast", "resolution": "1080p", "faces": "many", "consent": "true"}
    )

    again = Job.objects.select_related("source", "target").exclude(id=first.id).get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{again.id}/"
    assert (again.mode, again.resolution, again.faces) == ("fast", "1080p", "many")
    assert again.consent_at is not None and again.consent_channel == "site"
    assert (again.source.sha256, again.target.sha256) == (first.source.sha256, first.target.sha256)
    assert again.source_id != first.source_id  # its own copy, deleted when it ends
    assert again.target.original_name == "party.jpg"
    assert billing_selectors.account_balance(user=funded_user).held > 0  # held like any new swap
    first.refresh_from_db()
    assert (first.mode, first.state) == ("standard", "created")


def test_run_again_needs_consent(client_a, funded_user, astronaut_pair):
    first = submit(funded_user, astronaut_pair)
    response = client_a.post(f"/jobs/{first.id}/run-again", {"mode": "hq", "resolution": "720p", "faces": "one"})
    assert response.status_code == 302 and response["Location"] == f"/jobs/{first.id}/"
    assert "confirm that you have the right" in said(response)
    assert Job.objects.count() == 1


def test_run_again_is_refused_with_a_reason_once_the_originals_are_deleted(client_a, funded_user, astronaut_pair):
    first = submit(funded_user, astronaut_pair)
    client_a.post(f"/jobs/{first.id}/cancel")  # any end deletes the uploads
    finished = stored_result_job(funded_user, width=320, height=200)

    for job in (first, finished):
        page = client_a.get(f"/jobs/{job.id}/").content.decode()
        assert 'id="run-again-submit"' not in page
        assert "deleted when this swap ended" in page
    response = client_a.post(
        f"/jobs/{first.id}/run-again", {"mode": "fast", "resolution": "720p", "faces": "one", "consent": "true"}
    )
    assert "The original photos were deleted when this swap ended" in said(response)
    assert Job.objects.count() == 2


def test_run_again_keeps_the_person_to_match(client_a, funded_user, astronaut_pair):
    """A job that swapped everyone who looks like face 1 offers that choice again, and keeps it."""
    first = submit(funded_user, astronaut_pair, faces="reference", reference_face_index="0")
    page = client_a.get(f"/jobs/{first.id}/").content.decode()
    assert '<option value="reference" selected>Everyone who looks like face 1, as before</option>' in page
    assert 'name="reference_face_index" value="0"' in page

    response = client_a.post(
        f"/jobs/{first.id}/run-again",
        {"mode": "fast", "resolution": "720p", "faces": "reference", "reference_face_index": "0", "consent": "true"},
    )
    again = Job.objects.exclude(id=first.id).get()
    assert response.status_code == 302
    assert (again.faces, again.reference_face_index, again.face_index) == ("reference", 0, None)

    # Without the face to match, the site says what is missing and makes nothing.
    response = client_a.post(
        f"/jobs/{first.id}/run-again", {"mode": "fast", "resolution": "720p", "faces": "reference", "consent": "true"}
    )
    assert "Pick the person to match on the photo" in said(response)
    assert Job.objects.count() == 2
