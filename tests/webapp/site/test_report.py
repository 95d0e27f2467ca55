"""/report: a person who finds a swap of themselves reports it; it lands in the moderators' queue,
where one action protects their face and another takes the result down."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from billing.models import LedgerEntry
from moderation.models import ProtectedIdentity, TakedownReport
from tests.webapp.conftest import drain, post_job
from webapp.jobs import takedowns
from webapp.jobs.models import Job
from webapp.jobs.steps import image as image_step
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)

REPORTER = {"reporter_name": "Ada Example", "reporter_email": "ada@example.com", "relation": "self"}


@pytest.fixture
def finished_job(api_a, astronaut_pair) -> Job:
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain()
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    return job


def test_the_form_is_public_and_needs_a_link_or_a_file():
    anonymous = Client()
    page = anonymous.get("/report")
    assert page.status_code == 200 and "Report a swap of you" in page.content.decode()
    empty = anonymous.post("/report", REPORTER)
    assert empty.status_code == 400 and "Send a link to the result or the file itself" in empty.content.decode()
    assert not TakedownReport.objects.exists()


def test_a_downloaded_file_finds_its_job_by_its_credentials(finished_job):
    downloaded = storage.get_bytes(settings.S3_RESULTS_BUCKET, finished_job.result_key)
    response = Client().post("/report", {**REPORTER, "file": SimpleUploadedFile("found.jpg", downloaded)})
    assert response.status_code == 200 and "we received your report" in response.content.decode()
    report = TakedownReport.objects.get()
    assert report.status == "open" and report.subject_id == finished_job.id  # no link given: the C2PA content id
    assert report.file_provenance["validation_state"] == "Trusted"
    assert report.face_vector and report.face_embedding_kind  # the face, as an embedding only


def test_a_link_alone_is_enough_and_moderators_act_in_one_step(finished_job, admin_client):
    link = f"https://visage.example/jobs/{finished_job.id}/"
    Client().post("/report", {**REPORTER, "link": link, "details": "That is me; I never agreed."})
    report = TakedownReport.objects.get()
    assert report.subject_id == finished_job.id and report.face_vector  # the face from the stored result

    changelist = reverse("admin:moderation_takedownreport_changelist")
    page = admin_client.get(changelist)
    assert page.status_code == 200 and "Ada Example" in page.content.decode()

    admin_client.post(changelist, {"action": "protect_face", "_selected_action": [report.pk]})
    identity = ProtectedIdentity.objects.get()
    assert identity.faces.count() == 1 and identity.faces.get().vector == report.face_vector
    report.refresh_from_db()
    assert report.protected_identity == identity and report.status == "resolved"

    admin_client.post(changelist, {"action": "take_down_result", "_selected_action": [report.pk]})
    finished_job.refresh_from_db()
    assert finished_job.media_deleted_at is not None and not finished_job.result_visible
    assert finished_job.result_key not in storage.list_keys(settings.S3_RESULTS_BUCKET)
    report.refresh_from_db()
    assert report.result_taken_down


def test_the_protected_face_refuses_the_next_swap(finished_job, admin_client, api_a, astronaut_pair):
    Client().post("/report", {**REPORTER, "link": str(finished_job.id)})
    report = TakedownReport.objects.get()
    changelist = reverse("admin:moderation_takedownreport_changelist")
    admin_client.post(changelist, {"action": "protect_face", "_selected_action": [report.pk]})
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain(["moderation"])
    job = Job.objects.get(id=job_id)
    assert job.state == "rejected" and job.error_code == "protected_identity", (job.state, job.error_code)


def test_moderators_may_work_the_report_queue():
    group = Group.objects.get(name="moderator")
    codenames = set(group.permissions.values_list("codename", flat=True))
    assert {"view_takedownreport", "change_takedownreport"} <= codenames


@pytest.mark.parametrize("when", ["queued", "running"])
def test_a_takedown_before_the_job_ends_ends_it_unbilled_and_stores_nothing(api_a, astronaut_pair, monkeypatch, when):
    """Taken down while queued or running, the job went on: it stored its result, before and
    thumbnail (which nothing deleted: the retention purge skips media already deleted) and charged
    its owner."""
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain(["moderation"])
    assert Job.objects.get(id=job_id).state == "queued"
    if when == "queued":
        assert takedowns.job_take_down(job_id=job_id)
    else:
        swap = image_step.swap_image

        def taken_down_meanwhile(job, *args, **kwargs):
            assert Job.objects.get(id=job.id).state == "running"
            takedowns.job_take_down(job_id=job.id)
            return swap(job, *args, **kwargs)

        monkeypatch.setattr(image_step, "swap_image", taken_down_meanwhile)
    drain()
    job = Job.objects.get(id=job_id)
    assert job.state == "rejected" and job.media_deleted_at is not None and not job.result_visible
    assert storage.list_keys(settings.S3_RESULTS_BUCKET) == []
    kinds = list(LedgerEntry.objects.filter(job_id=job.id).values_list("kind", flat=True))
    assert sorted(kinds) == ["hold", "release"]
