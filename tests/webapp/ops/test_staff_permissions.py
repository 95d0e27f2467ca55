"""Staff see what their permissions let them see and do only what those let them do: an admin
action without `permissions` runs for anyone who can view the list (Django's rule), and
django-rq's dashboard checks only is_staff (found by trying the admin as a moderator)."""

from __future__ import annotations

import csv
import io
import uuid
from decimal import Decimal

import django_rq
import pytest
from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.test import Client
from django.utils import timezone
from django_rq.settings import QUEUES_LIST

from billing import selectors, top_up_requests
from billing.models import TopUpRequest
from moderation.models import Verdict
from webapp.accounts import services as account_services
from webapp.accounts.models import ApiToken
from webapp.jobs.admin import consent_csv
from webapp.jobs.choices import JobState
from webapp.jobs.models import Job, Upload

pytestmark = pytest.mark.django_db(transaction=True)


def _staff(django_user_model, name: str, *perms: str):
    user = django_user_model.objects.create_user(username=name, password="x-pass-12345", is_staff=True)
    for perm in perms:
        app, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    return user


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_staff_who_may_only_view_top_up_requests_cannot_add_the_credits(django_user_model, user_b):
    request = top_up_requests.top_up_request_create(user=user_b, pack=None, credits=Decimal("5000"))
    viewer = _client(_staff(django_user_model, "viewer", "billing.view_topuprequest"))
    assert 'value="add_credits"' not in viewer.get("/admin/billing/topuprequest/").content.decode()
    for action in ("add_credits", "decline"):
        viewer.post("/admin/billing/topuprequest/", {"action": action, "_selected_action": [request.pk], "index": 0})
    assert selectors.account_balance(user=user_b).balance == 0
    assert TopUpRequest.objects.get(pk=request.pk).status == "open"
    clerk = _client(_staff(django_user_model, "clerk", "billing.view_topuprequest", "billing.add_ledgerentry"))
    clerk.post("/admin/billing/topuprequest/", {"action": "add_credits", "_selected_action": [request.pk], "index": 0})
    assert selectors.account_balance(user=user_b).balance == Decimal("5000")


def test_staff_who_may_only_view_cannot_revoke_tokens_or_unlock_sign_in(django_user_model, user_b):
    token, _ = account_services.api_token_create(user=user_b, name="ci")
    viewer = _client(_staff(django_user_model, "viewer", "webapp.view_apitoken", "auth.view_user"))
    viewer.post("/admin/webapp/apitoken/", {"action": "revoke", "_selected_action": [token.pk], "index": 0})
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
    assert 'value="unlock_sign_in"' not in viewer.get("/admin/auth/user/").content.decode()


def test_only_superusers_reach_the_job_queues_dashboard(django_user_model):
    queue = django_rq.get_queue("default")
    task = queue.enqueue("builtins.print", "a task's argument")
    index = [q["name"] for q in QUEUES_LIST].index("default")
    moderator = django_user_model.objects.create_user(username="mod", password="mod-pass-123", is_staff=True)
    moderator.groups.add(Group.objects.get(name="moderator"))
    as_moderator = _client(moderator)
    assert as_moderator.get(f"/django-rq/queues/{index}/{task.id}/").status_code == 302  # to the admin login
    as_moderator.post(f"/django-rq/queues/{index}/empty/")
    assert queue.count == 1
    root = _client(django_user_model.objects.create_superuser("root", "root@example.com", "root-pass-123"))
    assert root.get(f"/django-rq/queues/{index}/{task.id}/").status_code == 200


def test_a_moderator_sees_peoples_pictures_only_where_there_is_a_reason(django_user_model, user_b):
    """Any job's desk presigned its originals for download (a job never flagged, queued for the
    GPU), and the job list linked every finished result."""
    uploads = [
        Upload.objects.create(owner=user_b, role=role, s3_key=f"{user_b.id}/x-{role}.jpg", sha256="0" * 64,
                              media_type="image/jpeg", width=64, height=64, size_bytes=10)
        for role in ("source", "target")
    ]
    job = Job.objects.create(owner=user_b, source=uploads[0], target=uploads[1], state=JobState.QUEUED)
    moderator = django_user_model.objects.create_user(username="mod", password="mod-pass-123", is_staff=True)
    moderator.groups.add(Group.objects.get(name="moderator"))
    as_moderator = _client(moderator)
    page = as_moderator.get(f"/admin/webapp/job/{job.id}/change/").content.decode()
    assert settings.S3_UPLOADS_BUCKET not in page and "shown only for jobs in review" in page
    Job.objects.filter(id=job.id).update(state=JobState.REVIEW)  # flagged: the moderator must see them
    assert settings.S3_UPLOADS_BUCKET in as_moderator.get(f"/admin/webapp/job/{job.id}/change/").content.decode()
    listing = as_moderator.get("/admin/webapp/job/").content.decode()
    assert "column-result" not in listing
    root = _client(django_user_model.objects.create_superuser("root", "root@example.com", "root-pass-123"))
    assert "column-result" in root.get("/admin/webapp/job/").content.decode()


def test_a_verdicts_review_note_is_not_rewritten_in_the_admin(django_user_model):
    """The note is the audit record of another reviewer's decision: a moderator could change
    "explicit nudity, rejected" to "fine, approved" while it still named the first reviewer."""
    senior = django_user_model.objects.create_user(username="senior", password="x-pass-12345", is_staff=True)
    verdict = Verdict.objects.create(
        subject_id=uuid.uuid4(), stage="input", decision="review", reviewed_by=senior, reviewed_at=timezone.now(),
        review_decision="rejected", review_note="explicit nudity, rejected",
    )
    moderator = django_user_model.objects.create_user(username="mod", password="mod-pass-123", is_staff=True)
    moderator.groups.add(Group.objects.get(name="moderator"))
    page = _client(moderator).get(f"/admin/moderation/verdict/{verdict.pk}/change/").content.decode()
    assert 'name="review_note"' not in page and "explicit nudity, rejected" in page


def test_the_consent_export_neutralises_a_username_that_is_a_formula(django_user_model):
    """Usernames may start with + - @: a spreadsheet opening the export ran them as formulas
    (the billing exports already neutralised them)."""
    owner = django_user_model.objects.create_user(username="+1+cmd", password="x-pass-12345")
    upload = Upload.objects.create(owner=owner, role="source", s3_key="k", sha256="0" * 64,
                                   media_type="image/jpeg", width=64, height=64, size_bytes=10)
    job = Job.objects.create(owner=owner, source=upload, target=upload, state=JobState.SUCCEEDED)
    rows = list(csv.reader(io.StringIO(consent_csv([job]))))
    assert rows[1][3] == "'+1+cmd"


def test_staff_who_may_only_view_jobs_get_no_pictures_of_jobs_in_review(django_user_model, user_b):
    """People's pictures on the desk and in the review list are for reviewers (moderation.review_content),
    not for every staff member who may look jobs up."""
    uploads = [
        Upload.objects.create(owner=user_b, role=role, s3_key=f"{user_b.id}/x-{role}.jpg", sha256="0" * 64,
                              media_type="image/jpeg", width=64, height=64, size_bytes=10)
        for role in ("source", "target")
    ]
    job = Job.objects.create(owner=user_b, source=uploads[0], target=uploads[1], state=JobState.REVIEW)
    clerk = django_user_model.objects.create_user(username="clerk", password="x-pass-12345", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(content_type__app_label="webapp", codename="view_job"))
    client = Client()
    client.force_login(clerk)
    page = client.get(f"/admin/webapp/job/{job.id}/change/")
    listing = client.get("/admin/webapp/job/?queue=review")
    assert page.status_code == listing.status_code == 200
    assert settings.S3_UPLOADS_BUCKET not in page.content.decode()
    assert settings.S3_UPLOADS_BUCKET not in listing.content.decode()

    clerk.groups.add(Group.objects.get(name="moderator"))  # a reviewer sees them
    clerk = django_user_model.objects.get(pk=clerk.pk)
    client.force_login(clerk)
    assert settings.S3_UPLOADS_BUCKET in client.get(f"/admin/webapp/job/{job.id}/change/").content.decode()
    assert settings.S3_UPLOADS_BUCKET in client.get("/admin/webapp/job/?queue=review").content.decode()
