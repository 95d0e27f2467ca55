"""Share links: tokens stored only as hashes, expiry, revocation, what may be shared."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone

from moderation.models import TakedownReport
from tests.webapp.site.conftest import stored_result_job
from webapp.jobs import sharing, takedowns
from webapp.jobs.errors import JobNotShareable, ShareLinksDisabled
from webapp.jobs.models import Job, ShareLink
from webapp.jobs.services import maintenance, user_actions

pytestmark = pytest.mark.django_db


@pytest.fixture
def sharing_on(settings):
    settings.SHARE_LINKS_ENABLED = True
    settings.SHARE_LINK_TTL_DAYS = 7
    return settings


@pytest.fixture
def result_job(funded_user):
    return stored_result_job(funded_user, width=320, height=200, face_box=(100, 40, 180, 140))


def test_the_token_is_long_random_and_only_its_sha256_is_stored(sharing_on, result_job):
    link, token, created = sharing.share_link_create(job=result_job)

    assert created
    assert len(token) >= 43  # 256 bits in URL-safe base64 (at least 128 asked for)
    stored = ShareLink.objects.values().get(id=link.id)
    assert stored["token_sha256"] == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str(stored)  # no column holds the token itself
    assert sharing.shared_job(token) == result_job
    assert link.expires_at - timezone.now() > timedelta(days=6, hours=23)


def test_the_token_cannot_be_made_from_the_database_without_the_secret_key(sharing_on, result_job):
    link, token, _ = sharing.share_link_create(job=result_job)
    sharing_on.SECRET_KEY = "another-secret-key-for-this-test-only-0123456789"

    assert sharing.token_for(link.nonce) != token
    assert sharing.shared_job(token) == result_job  # the link itself still opens (found by its hash)


def test_sharing_again_returns_the_active_link_and_a_new_one_after_revocation(sharing_on, result_job):
    first, token, created = sharing.share_link_create(job=result_job)
    again, same_token, created_again = sharing.share_link_create(job=result_job)
    assert (again.id, same_token, created_again) == (first.id, token, False)

    assert sharing.share_links_revoke(job=result_job) == 1
    assert sharing.shared_job(token) is None
    fresh, fresh_token, created_fresh = sharing.share_link_create(job=result_job)
    assert created_fresh and fresh_token != token
    assert sharing.shared_job(fresh_token) == result_job


def test_an_expired_link_does_not_open_and_counts_no_view(sharing_on, result_job):
    link, token, _ = sharing.share_link_create(job=result_job)
    assert sharing.shared_job(token) is not None
    ShareLink.objects.filter(id=link.id).update(expires_at=timezone.now() - timedelta(seconds=1))

    assert sharing.shared_job(token) is None
    assert ShareLink.objects.get(id=link.id).view_count == 1
    assert sharing.share_link_active(Job.objects.get(id=result_job.id)) is None


def test_sharing_is_refused_when_the_deployment_has_it_off(settings, result_job):
    settings.SHARE_LINKS_ENABLED = False
    with pytest.raises(ShareLinksDisabled):
        sharing.share_link_create(job=result_job)

    settings.SHARE_LINKS_ENABLED = True
    _, token, _ = sharing.share_link_create(job=result_job)
    settings.SHARE_LINKS_ENABLED = False
    assert sharing.shared_job(token) is None  # turning it off closes existing links too


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"state": "running"}, "Only finished swaps"),
        ({"state": "review"}, "reviewed by a moderator"),
        ({"media_deleted_at": timezone.now()}, "result was deleted"),
        ({"result_visible": False}, "not published"),
    ],
)
def test_only_a_published_stored_result_can_be_shared(sharing_on, result_job, change, words):
    Job.objects.filter(id=result_job.id).update(**change)
    with pytest.raises(JobNotShareable, match=words):
        sharing.share_link_create(job=Job.objects.get(id=result_job.id))


def test_an_open_takedown_report_closes_the_page_and_refuses_new_links(sharing_on, result_job):
    _, token, _ = sharing.share_link_create(job=result_job)
    TakedownReport.objects.create(reporter_name="Pat", reporter_email="p@example.com", subject_id=result_job.id)

    assert sharing.shared_job(token) is None
    with pytest.raises(JobNotShareable, match="reported"):
        sharing.share_link_create(job=result_job)


def test_a_pasted_share_link_finds_its_job_for_a_takedown_report(sharing_on, result_job):
    _, token, _ = sharing.share_link_create(job=result_job)
    sharing.share_links_revoke(job=result_job)

    assert takedowns.job_for_link(f"https://visage.example/s/{token}/") == result_job


def test_taking_down_purging_or_deleting_the_result_revokes_its_links(sharing_on, funded_user):
    taken, purged, deleted = (
        stored_result_job(funded_user, width=320, height=200, face_box=(100, 40, 180, 140)) for _ in range(3)
    )
    tokens = {job.id: sharing.share_link_create(job=job)[1] for job in (taken, purged, deleted)}

    takedowns.job_take_down(job_id=taken.id)
    Job.objects.filter(id=purged.id).update(completed_at=timezone.now() - timedelta(days=30))
    assert maintenance.results_purge_expired() == 1
    user_actions.job_delete(job=deleted)

    for job_id in (taken.id, purged.id):
        assert not ShareLink.objects.filter(job_id=job_id, revoked_at__isnull=True).exists()
        assert sharing.shared_job(tokens[job_id]) is None
    assert not ShareLink.objects.filter(job_id=deleted.id).exists()
    assert sharing.shared_job(tokens[deleted.id]) is None
