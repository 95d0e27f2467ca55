"""/api/v1 for the gallery: share links (POST/DELETE /jobs/{id}/share), favourites (PATCH) and the
list's search (?q=) and favourite filter."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from tests.helpers.problems import assert_problem
from tests.webapp.site.conftest import stored_result_job
from webapp.jobs.models import Job, ShareLink

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def result_job(funded_user):
    return stored_result_job(funded_user, width=320, height=200, face_box=(100, 40, 180, 140))


def post_named(client, source: bytes, target: bytes, target_name: str) -> dict:
    response = client.post(
        "/api/v1/jobs",
        {"source": SimpleUploadedFile("me.png", source), "target": SimpleUploadedFile(target_name, target),
         "consent": "true"},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    return response.json()


# --- share links -----------------------------------------------------------------------------------


def test_share_is_403_problem_when_the_deployment_has_it_off(api_a, result_job, settings):
    settings.SHARE_LINKS_ENABLED = False
    body = assert_problem(api_a.post(f"/api/v1/jobs/{result_job.id}/share"), 403, "share_links_disabled")
    assert "VISAGE_SHARE_LINKS_ENABLED" in body["detail"]
    assert not ShareLink.objects.exists()
    assert api_a.get(f"/api/v1/jobs/{result_job.id}").json()["share"] is None


def test_share_creates_a_link_listed_in_the_job_and_delete_revokes_it(api_a, result_job, settings):
    settings.SHARE_LINKS_ENABLED = True
    created = api_a.post(f"/api/v1/jobs/{result_job.id}/share")
    assert created.status_code == 201, created.content
    link = created.json()
    assert link["url"].startswith("http://testserver/s/") and link["expires_at"].endswith("Z")

    job = api_a.get(f"/api/v1/jobs/{result_job.id}").json()
    assert job["share"]["url"] == link["url"] and job["share"]["expires_at"] == link["expires_at"]
    assert job["urls"]["share"].endswith(f"/api/v1/jobs/{result_job.id}/share")
    again = api_a.post(f"/api/v1/jobs/{result_job.id}/share")
    assert (again.status_code, again.json()["url"]) == (200, link["url"])  # the active link, not another
    assert APIClient().get(link["url"]).status_code == 200

    etag = api_a.get(f"/api/v1/jobs/{result_job.id}")["ETag"]
    assert api_a.delete(f"/api/v1/jobs/{result_job.id}/share").status_code == 204
    # A client holding the old representation is told it changed (no 304 keeping a dead link).
    assert api_a.get(f"/api/v1/jobs/{result_job.id}", HTTP_IF_NONE_MATCH=etag).status_code == 200
    assert APIClient().get(link["url"]).status_code == 404
    assert api_a.get(f"/api/v1/jobs/{result_job.id}").json()["share"] is None


def test_share_of_an_unfinished_job_is_409_problem_that_says_why(api_a, astronaut_pair, settings):
    settings.SHARE_LINKS_ENABLED = True
    source, target, _ = astronaut_pair
    job = post_named(api_a, source, target, "beach.jpg")
    body = assert_problem(api_a.post(f"/api/v1/jobs/{job['id']}/share"), 409, "job_not_shareable")
    assert "Only finished swaps can be shared" in body["detail"]


def test_share_of_a_deleted_result_is_409(api_a, result_job, settings):
    from django.utils import timezone

    settings.SHARE_LINKS_ENABLED = True
    Job.objects.filter(id=result_job.id).update(media_deleted_at=timezone.now())
    body = assert_problem(api_a.post(f"/api/v1/jobs/{result_job.id}/share"), 409, "job_not_shareable")
    assert "deleted" in body["detail"]


def test_another_users_job_cannot_be_shared_or_unshared(api_b, result_job, settings):
    settings.SHARE_LINKS_ENABLED = True
    assert_problem(api_b.post(f"/api/v1/jobs/{result_job.id}/share"), 404, "not_found")
    assert_problem(api_b.delete(f"/api/v1/jobs/{result_job.id}/share"), 404, "not_found")


# --- favourites and search -------------------------------------------------------------------------


def test_patch_favourite_and_filter_the_list(api_a, funded_user):
    starred, plain = (stored_result_job(funded_user, width=320, height=200) for _ in range(2))
    response = api_a.patch(f"/api/v1/jobs/{starred.id}", {"favourite": True}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["favourite"] is True

    favourites = api_a.get("/api/v1/jobs?favourite=true").json()["results"]
    assert [job["id"] for job in favourites] == [str(starred.id)]
    others = api_a.get("/api/v1/jobs?favourite=false").json()["results"]
    assert [job["id"] for job in others] == [str(plain.id)]

    assert api_a.patch(f"/api/v1/jobs/{starred.id}", {"favourite": False}, format="json").json()["favourite"] is False
    assert api_a.get("/api/v1/jobs?favourite=true").json()["count"] == 0


def test_patch_and_filter_refuse_bad_values_with_problems(api_a, api_b, result_job):
    assert_problem(api_a.patch(f"/api/v1/jobs/{result_job.id}", {}, format="json"), 400, "validation_error", "favourite")
    assert_problem(api_a.get("/api/v1/jobs?favourite=maybe"), 400, "validation_error", "favourite")
    assert_problem(api_b.patch(f"/api/v1/jobs/{result_job.id}", {"favourite": True}, format="json"), 404, "not_found")
    assert Job.objects.get(id=result_job.id).favourite is False


def test_search_finds_jobs_by_the_target_file_name(api_a, astronaut_pair, funded_user):
    source, target, _ = astronaut_pair
    beach = post_named(api_a, source, target, "Beach Holiday 2026.jpg")
    office = post_named(api_a, source, target, "office-party.jpg")
    stored_result_job(funded_user, width=320, height=200)  # an older job: no name kept

    assert beach["target"]["name"] == "Beach Holiday 2026.jpg"
    found = api_a.get("/api/v1/jobs", {"q": "beach"}).json()
    assert [job["id"] for job in found["results"]] == [beach["id"]]
    found = api_a.get("/api/v1/jobs", {"q": "PARTY office"}).json()
    assert [job["id"] for job in found["results"]] == [office["id"]]
    assert api_a.get("/api/v1/jobs", {"q": "holiday party"}).json()["count"] == 0
    assert api_a.get("/api/v1/jobs").json()["count"] == 3


def test_the_schema_documents_the_new_endpoints():
    schema = json.loads(APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").content)
    share = schema["paths"]["/api/v1/jobs/{job_id}/share"]
    assert {"201", "403", "409"} <= set(share["post"]["responses"])
    assert "204" in share["delete"]["responses"]
    assert "patch" in schema["paths"]["/api/v1/jobs/{job_id}"]
    assert {"q", "favourite"} <= {p.get("name") for p in schema["paths"]["/api/v1/jobs"]["get"]["parameters"]}
