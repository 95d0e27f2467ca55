"""The moderator's desk in the admin: everything needed to decide on one page, a required note,
the next job in the queue, compact queue rows, and the queue's length on the admin index."""

from __future__ import annotations

import pytest

from moderation.models import Verdict
from tests.moderation.conftest import gpu_touched
from tests.webapp.conftest import drain, post_job
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


def _in_review(api, source, target) -> str:
    job_id = post_job(api, source, target).json()["id"]
    drain(["moderation"])
    assert Job.objects.get(id=job_id).state == "review"
    return job_id


def test_desk_shows_everything_and_decides_with_a_note(
    api_a, astronaut_pair, nsfw_models, settings, moderator_client, moderator
):
    settings.VISAGE_NSFW_MODEL = str(nsfw_models["review"])
    source, target, _ = astronaut_pair
    first = _in_review(api_a, source, target)
    second = _in_review(api_a, source, target)

    index = moderator_client.get("/admin/").content.decode()
    assert "Visage administration" in index and "Django administration" not in index
    assert "2 awaiting review" in index

    queue = moderator_client.get("/admin/webapp/job/?queue=review").content.decode()
    assert "clip: disabled" not in queue  # one line per row, not every check's note
    assert "FEMALE_BREAST_EXPOSED" in queue

    desk = moderator_client.get(f"/admin/webapp/job/{first}/change/").content.decode()
    assert 'id="desk"' in desk
    assert desk.count("<figure>") == 2 and "source (" in desk and "target (" in desk  # large images
    assert 'class="outcome-review">review<' in desk and "face_presence" in desk  # every check's finding
    assert 'id="desk-history"' in desk and "rejected" in desk
    assert f'/admin/webapp/job/{second}/change/" id="desk-next"' in desk

    # No note, no decision.
    response = moderator_client.post(f"/admin/webapp/job/{first}/review/", {"decision": "reject", "note": " "})
    assert response.status_code == 302
    assert Job.objects.get(id=first).state == "review"

    response = moderator_client.post(
        f"/admin/webapp/job/{first}/review/", {"decision": "reject", "note": "explicit nudity"}
    )
    assert response.status_code == 302 and response["Location"] == f"/admin/webapp/job/{second}/change/"
    assert Job.objects.get(id=first).state == "rejected"
    verdict = Verdict.objects.get(subject_id=first, stage="input")
    assert (verdict.review_decision, verdict.review_note, verdict.reviewed_by) == ("rejected", "explicit nudity", moderator)

    # The next one: the owner's history now shows the rejection; approving sends it to the GPU queue.
    desk = moderator_client.get(f"/admin/webapp/job/{second}/change/").content.decode()
    assert "<b>1</b> rejected" in desk
    response = moderator_client.post(
        f"/admin/webapp/job/{second}/review/", {"decision": "approve", "note": "a swimsuit, fine"}
    )
    assert response["Location"] == "/admin/webapp/job/?queue=review"
    assert Job.objects.get(id=second).state == "queued" and gpu_touched() == 1
    assert "0 awaiting review" in moderator_client.get("/admin/").content.decode()


def test_only_moderators_decide(api_a, astronaut_pair, nsfw_models, settings, client, django_user_model):
    settings.VISAGE_NSFW_MODEL = str(nsfw_models["review"])
    source, target, _ = astronaut_pair
    job_id = _in_review(api_a, source, target)
    staff = django_user_model.objects.create_user(username="staff", password="x-pass-123", is_staff=True)
    client.force_login(staff)
    response = client.post(f"/admin/webapp/job/{job_id}/review/", {"decision": "approve", "note": "ok"})
    assert response.status_code == 403
    assert Job.objects.get(id=job_id).state == "review"
