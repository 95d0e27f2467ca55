"""Account deletion against what is under way at that moment, and what it must not leave behind: a
submit already past sign-in, screening in progress, a resumable upload being completed, a moderator
approving, open top-up requests, a username that already starts with "deleted-", and the hashes of
the person's allowed photos."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from billing import selectors as billing_selectors
from billing import top_up_requests
from billing.models import TopUpRequest
from moderation import services as moderation_services
from moderation.models import ModerationRecord
from tests.helpers.direct_uploads import send_parts, start_upload
from tests.webapp.conftest import drain, post_job
from webapp.accounts.deletion import account_delete
from webapp.jobs.models import Job
from webapp.jobs.services import direct_uploads, intake, lifecycle
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)

HANG_GUARD_S = 60


def stored_keys() -> list[str]:
    return storage.list_keys(settings.S3_UPLOADS_BUCKET) + storage.list_keys(settings.S3_RESULTS_BUCKET)


def test_a_submit_already_past_sign_in_leaves_no_job(api_a, funded_user, astronaut_pair, monkeypatch):
    """Its originals were being stored while the account was deleted: its job was committed after,
    then screened, run, charged, and its result kept."""
    source, target, _ = astronaut_pair
    stored, go, real_put = threading.Event(), threading.Event(), storage.put_bytes

    def slow_put(bucket, key, data, content_type):  # originals stored, the job row not written yet
        real_put(bucket, key, data, content_type)
        if key.endswith("/target"):
            stored.set()
            go.wait(HANG_GUARD_S)

    monkeypatch.setattr(intake.storage, "put_bytes", slow_put)
    answers = []

    def submit():
        try:
            answers.append(post_job(api_a, source, target))
        finally:
            connection.close()

    thread = threading.Thread(target=submit)
    thread.start()
    assert stored.wait(HANG_GUARD_S)
    account_delete(user=funded_user)
    go.set()
    thread.join(HANG_GUARD_S)
    drain()
    assert answers[0].status_code == 403 and answers[0].json()["code"] == "account_closed"
    assert not Job.objects.filter(owner=funded_user).exists() and stored_keys() == []


def test_faces_analysed_while_the_account_is_deleted_are_not_kept(api_a, funded_user, astronaut_pair, monkeypatch):
    source, target, _ = astronaut_pair
    assert post_job(api_a, source, target).status_code == 201
    real = moderation_services.screen_inputs

    def delete_then_screen(**kwargs):  # the screener has read the originals
        account_delete(user=funded_user)
        return real(**kwargs)

    monkeypatch.setattr(moderation_services, "screen_inputs", delete_then_screen)
    drain()
    assert stored_keys() == []  # was: <owner>/<job>/face-analysis.npz, until the orphan sweep an hour later


def test_a_resumable_upload_completed_while_the_account_is_deleted(api_a, funded_user, astronaut_pair, monkeypatch):
    source, _, _ = astronaut_pair
    upload = start_upload(api_a, source, kind="image", content_type="image/png").json()
    send_parts(upload, source, [p["part_number"] for p in upload["parts"]])
    real = direct_uploads._validate_stored

    def validate_then_delete(up):  # validation streams the whole file; the deletion lands meanwhile
        info = real(up)
        account_delete(user=funded_user)
        return info

    monkeypatch.setattr(direct_uploads, "_validate_stored", validate_then_delete)
    api_a.raise_request_exception = False
    answer = api_a.post(f"/api/v1/uploads/{upload['id']}/complete")
    assert answer.status_code == 404, answer.content[:200]  # was a 500
    assert stored_keys() == []


def test_a_moderator_approving_as_the_account_is_deleted(api_a, funded_user, astronaut_pair, django_user_model,
                                                        monkeypatch):
    source, target, _ = astronaut_pair
    monkeypatch.setattr(moderation_services, "screen_inputs",
                        lambda **kw: moderation_services.ScreeningOutcome(decision="review", message="check"))
    job_id = post_job(api_a, source, target).json()["id"]
    drain()  # the job waits in the review queue
    admin = Client(raise_request_exception=False)
    admin.force_login(django_user_model.objects.create_superuser("root", "r@example.com", "root-pass-123"))
    real = lifecycle.job_review_approve

    def deleted_first(job):  # between the view's checks and the approval
        account_delete(user=funded_user)
        return real(job)

    monkeypatch.setattr(lifecycle, "job_review_approve", deleted_first)
    answer = admin.post(f"/admin/webapp/job/{job_id}/review/", {"decision": "approve", "note": "fine"})
    assert answer.status_code == 302  # was a 500


def test_open_top_up_requests_are_declined_and_cannot_be_credited(funded_user, django_user_model):
    request = top_up_requests.top_up_request_create(user=funded_user, pack=None, credits=Decimal("50"), note="for Ana")
    account_delete(user=funded_user)
    closed = TopUpRequest.objects.get(pk=request.pk)
    assert closed.status == TopUpRequest.Status.DECLINED and closed.note == ""
    before = billing_selectors.account_balance(user=funded_user).balance
    staff = django_user_model.objects.create_user("staff", password="staff-pass-123", is_staff=True)
    TopUpRequest.objects.filter(pk=request.pk).update(status=TopUpRequest.Status.OPEN)  # an admin reopened it
    assert top_up_requests.top_up_request_fulfil(request_id=request.pk, actor=staff) is None
    assert billing_selectors.account_balance(user=funded_user).balance == before


def test_a_username_that_starts_with_deleted_is_scrubbed_too():
    browser = Client()
    password = "Ana-pass-98765!"
    signed_up = browser.post(
        "/signup/", {"username": "deleted-ana", "email": "ana@example.com", "password1": password, "password2": password}
    )
    assert signed_up.status_code == 302
    user = get_user_model().objects.get(username="deleted-ana")
    assert browser.post("/account/delete/", {"password": password}).status_code == 302
    user.refresh_from_db()
    assert not user.is_active and user.email == "" and user.username != "deleted-ana"


def test_the_hashes_of_the_persons_allowed_photos_are_not_kept(api_a, funded_user, astronaut_pair):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain()
    assert ModerationRecord.objects.filter(verdict__subject_id=job_id).exists()
    account_delete(user=funded_user)
    assert not ModerationRecord.objects.filter(verdict__subject_id=job_id, known_bad=False).exists()
