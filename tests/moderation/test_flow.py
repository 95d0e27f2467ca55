"""Screening through the API with a real worker: reject, review, approve in the admin, known-bad hashes.

The GPU queues are real Redis queues; "nothing reached a GPU" is asserted on them and on their
started/finished/failed registries.
"""

from __future__ import annotations

import numpy as np
import pytest
from skimage import data as skdata

from moderation import identities, nsfw, services
from moderation.models import ModerationRecord, ProtectedIdentity, Verdict
from swap.image_io import decode_image
from tests.helpers.images import banner, encode
from tests.moderation.conftest import gpu_queued, gpu_touched
from tests.webapp.conftest import drain, post_job
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


def held(api) -> float:
    return float(api.get("/api/v1/me").json()["held"])


def job_body(api, job_id: str) -> dict:
    return api.get(f"/api/v1/jobs/{job_id}").json()


def submit(api, source: bytes, target: bytes) -> str:
    response = post_job(api, source, target)
    assert response.status_code == 201, response.content
    drain(
        [  # screening only: the moderation queue
            "moderation",
        ]
    )
    return response.json()["id"]


def admin_action(client, action: str, job_id: str):
    response = client.post("/admin/webapp/job/", {"action": action, "_selected_action": [job_id]})
    assert response.status_code == 302, response.content[:500]
    return response


def test_astronaut_pair_is_allowed_with_every_check_recorded(api_a, astronaut_pair, settings):
    settings.VISAGE_NSFW_MODEL = ""
    source, target, _ = astronaut_pair
    job_id = submit(api_a, source, target)
    assert job_body(api_a, job_id)["state"] == "queued"
    assert gpu_queued() == 1
    verdict = Verdict.objects.get(subject_id=job_id, stage="input")
    assert verdict.decision == "allow"
    checks = {(c.role, c.check_name): c.outcome for c in verdict.checks.all()}
    assert checks[("source", "nsfw")] == checks[("target", "nsfw")] == "pass"
    assert checks[("source", "face_presence")] == checks[("target", "face_presence")] == "pass"
    assert checks[("source", "clip")] == "disabled"
    assert any("clip" in line for line in verdict.disabled_checks)
    records = ModerationRecord.objects.filter(verdict=verdict)
    assert {r.role for r in records} == {"source", "target"} and not any(r.known_bad for r in records)


def test_nsfw_reject_releases_credits_and_repeat_is_rejected_by_hash_without_models(
    api_a, astronaut_pair, nsfw_models, settings
):
    settings.VISAGE_NSFW_MODEL = str(nsfw_models["reject"])
    source, target, _ = astronaut_pair
    job_id = submit(api_a, source, target)
    body = job_body(api_a, job_id)
    assert body["state"] == "rejected"
    assert body["error"]["code"] == "content_rejected"
    assert "content policy" in body["error"]["message"]
    assert "GENITALIA" not in body["error"]["message"]  # reasons stay in the audit, not in the message
    assert held(api_a) == 0
    drain()
    assert gpu_touched() == 0
    assert ModerationRecord.objects.filter(known_bad=True).count() == 2

    # Same bytes again (with the real model configured): rejected by hash, no model runs.
    settings.VISAGE_NSFW_MODEL = ""
    detector, analyser = nsfw.get_detector(), identities.get_analyser()
    calls = detector.calls, analyser.calls
    again = submit(api_a, source, target)
    body = job_body(api_a, again)
    assert body["state"] == "rejected" and body["error"]["code"] == "content_rejected"
    assert (detector.calls, analyser.calls) == calls
    verdict = Verdict.objects.get(subject_id=again)
    assert {c.check_name for c in verdict.checks.all()} == {"known_hash"}
    assert held(api_a) == 0
    drain()
    assert gpu_touched() == 0


def test_review_waits_then_moderator_approval_enqueues_exactly_one_gpu_job(
    api_a, astronaut_pair, nsfw_models, settings, moderator_client, moderator
):
    settings.VISAGE_NSFW_MODEL = str(nsfw_models["review"])
    source, target, _ = astronaut_pair
    job_id = submit(api_a, source, target)
    assert job_body(api_a, job_id)["state"] == "review"
    assert held(api_a) > 0
    drain()
    assert gpu_touched() == 0

    queue_page = moderator_client.get("/admin/webapp/job/?queue=review")
    assert queue_page.status_code == 200
    html = queue_page.content.decode()
    assert job_id in html and "FEMALE_BREAST_EXPOSED" in html and "X-Amz-Signature" in html

    detail = moderator_client.get(f"/admin/webapp/job/{job_id}/change/")
    assert detail.status_code == 200 and "FEMALE_BREAST_EXPOSED" in detail.content.decode()

    admin_action(moderator_client, "approve_review", job_id)
    assert gpu_queued() == 1 and gpu_touched() == 1
    assert job_body(api_a, job_id)["state"] == "queued"
    verdict = Verdict.objects.get(subject_id=job_id, stage="input")
    assert verdict.review_decision == "approved" and verdict.reviewed_by == moderator and verdict.reviewed_at
    admin_action(moderator_client, "approve_review", job_id)  # a second click does nothing
    assert gpu_queued() == 1

    # The stand-in model flags the result too: it is held hidden in review until approved.
    drain()
    body = job_body(api_a, job_id)
    assert body["state"] == "review" and not body.get("result_url")
    assert Verdict.objects.get(subject_id=job_id, stage="output").decision == "review"
    assert "result" in moderator_client.get("/admin/webapp/job/?queue=review").content.decode()
    # The held result and the target as processed, each once: a web-size JPEG result is its own "after".
    desk = moderator_client.get(f"/admin/webapp/job/{job_id}/change/").content.decode()
    job = Job.objects.get(id=job_id)
    assert job.after_key == job.result_key
    assert desk.count("<figure>") == 2 and "output (held)" in desk and "web size" not in desk
    assert desk.count(f"/{job.result_key}?") == desk.count(f"/{job.before_key}?") > 0  # shown the same ways
    admin_action(moderator_client, "approve_review", job_id)
    assert job_body(api_a, job_id)["state"] == "succeeded"
    assert gpu_touched() == 1  # publishing a held result does not run the GPU again


def test_moderator_reject_releases_hold_and_marks_content_known_bad(
    api_a, astronaut_pair, nsfw_models, settings, moderator_client
):
    settings.VISAGE_NSFW_MODEL = str(nsfw_models["review"])
    source, target, _ = astronaut_pair
    job_id = submit(api_a, source, target)
    admin_action(moderator_client, "reject_review", job_id)
    body = job_body(api_a, job_id)
    assert body["state"] == "rejected" and body["error"]["code"] == "content_rejected"
    assert held(api_a) == 0
    drain()
    assert gpu_touched() == 0
    assert Verdict.objects.get(subject_id=job_id).review_decision == "rejected"
    assert ModerationRecord.objects.filter(known_bad=True, reviewed_at__isnull=False).count() == 2


def test_staff_without_the_moderator_group_cannot_approve(
    api_a, astronaut_pair, nsfw_models, settings, client, django_user_model
):
    from django.contrib.auth.models import Permission

    settings.VISAGE_NSFW_MODEL = str(nsfw_models["review"])
    staff = django_user_model.objects.create_user(username="staff", password="x", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_job"))
    client.force_login(staff)
    source, target, _ = astronaut_pair
    job_id = submit(api_a, source, target)
    client.post("/admin/webapp/job/", {"action": "approve_review", "_selected_action": [job_id]})
    assert job_body(api_a, job_id)["state"] == "review"
    assert gpu_touched() == 0


def test_protected_identity_as_source_is_rejected(
    api_a, astronaut_pair, astronaut_rgb, settings, client, django_user_model
):
    settings.VISAGE_NSFW_MODEL = ""
    admin_user = django_user_model.objects.create_superuser(username="root", password="x")
    client.force_login(admin_user)
    photo = encode(astronaut_rgb, "JPEG", quality=90)
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = client.post(
        "/admin/moderation/protectedidentity/add/",
        {
            "name": "Eileen Collins",
            "note": "",
            "active": "on",
            "reference_photos": [SimpleUploadedFile("ref.jpg", photo, content_type="image/jpeg")],
        },
    )
    assert response.status_code == 302, response.content[:1000]
    identity = ProtectedIdentity.objects.get(name="Eileen Collins")
    assert identity.faces.count() == 1  # an embedding; the photo itself is not stored anywhere

    source, _, _ = astronaut_pair
    other = encode(np.ascontiguousarray(np.fliplr(astronaut_rgb)))
    job_id = submit(api_a, source, other)
    body = job_body(api_a, job_id)
    assert body["state"] == "rejected"
    assert body["error"]["code"] == "protected_identity"
    assert "source image" in body["error"]["message"]
    assert held(api_a) == 0
    drain()
    assert gpu_touched() == 0


def test_blocked_text_in_target_is_rejected_and_clean_target_passes(api_a, astronaut_rgb, settings):
    from moderation.models import BlockedTerm

    settings.VISAGE_NSFW_MODEL = ""
    BlockedTerm.objects.create(term="ｆｏｒｂｉｄｄｅｎ")  # stored full-width; matched after NFKC
    source = encode(astronaut_rgb)
    flagged = encode(banner(astronaut_rgb, "FORBIDDEN DEAL")[:, :, ::-1].copy())
    job_id = submit(api_a, source, flagged)
    body = job_body(api_a, job_id)
    assert body["state"] == "rejected" and body["error"]["code"] == "blocked_text"
    assert held(api_a) == 0
    clean = encode(banner(astronaut_rgb, None)[:, :, ::-1].copy())
    assert job_body(api_a, submit(api_a, source, clean))["state"] == "queued"
    assert gpu_queued() == 1


def test_no_face_in_target_is_rejected_naming_the_target(api_a, astronaut_pair, settings):
    settings.VISAGE_NSFW_MODEL = ""
    source, _, _ = astronaut_pair
    job_id = submit(api_a, source, encode(skdata.coffee(), "JPEG"))
    body = job_body(api_a, job_id)
    assert body["state"] == "rejected"
    assert body["error"]["code"] == "no_face_detected"
    assert "target image" in body["error"]["message"]
    assert held(api_a) == 0
    assert not ModerationRecord.objects.filter(known_bad=True).exists()  # not content: may be resubmitted
    drain()
    assert gpu_touched() == 0


def test_screen_output_flags_for_review(nsfw_models, settings, astronaut_pair):
    import uuid

    settings.VISAGE_NSFW_MODEL = str(nsfw_models["reject"])
    outcome = services.screen_output(subject_id=uuid.uuid4(), pixels=decode_image(astronaut_pair[1]))
    assert outcome.decision == "review"  # a result is never rejected outright: a moderator decides
