"""The public share page /s/<token>/: the result with its AI-generated label, never the
inputs or the owner; noindex; one plain 404 for every link that does not open. And the job page's
Share button, end to end in a browser."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from moderation.models import TakedownReport
from tests.webapp.site.conftest import log_in, stored_result_job
from webapp.jobs import sharing, takedowns
from webapp.jobs.models import ShareLink
from webapp.jobs.services import user_actions

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = {"username": "alice", "password": "alice-pass-123"}
# A fresh random mask per response (the page's meta tag, the language switcher's form field) and the
# switcher's way back to the page asked for.
CSRF_META = re.compile(
    rb'<meta name="csrf-token" content="[^"]*">|name="csrfmiddlewaretoken" value="[^"]*"|name="next" value="[^"]*"'
)


@pytest.fixture
def sharing_on(settings):
    settings.SHARE_LINKS_ENABLED = True
    return settings


def result_job(owner):
    return stored_result_job(owner, width=320, height=200, face_box=(100, 40, 180, 140))


def assert_private_headers(response):
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    assert response["Referrer-Policy"] == "no-referrer"
    assert b'<meta name="robots" content="noindex, nofollow">' in response.content


def test_the_public_page_shows_the_labelled_result_and_nothing_of_the_inputs_or_owner(sharing_on, funded_user):
    job = result_job(funded_user)
    _, token, _ = sharing.share_link_create(job=job)

    response = Client().get(f"/s/{token}/")

    assert response.status_code == 200
    assert_private_headers(response)
    html = response.content.decode()
    assert "AI-generated" in html and 'id="share-label"' in html
    assert "Content Credentials" in html
    assert job.result_key in html  # the result itself, by a presigned URL
    assert "X-Amz-Expires=600" in html  # short-lived
    assert settings.S3_UPLOADS_BUCKET not in html
    assert job.before_key not in html and "before" not in html.lower()  # not even the original target
    assert funded_user.username not in html and funded_user.email not in html
    assert ShareLink.objects.get(job=job).view_count == 1


def test_the_public_page_names_the_results_content_credentials_when_it_has_them(sharing_on, funded_user):
    from webapp.jobs.models import Job

    job = result_job(funded_user)
    Job.objects.filter(id=job.id).update(provenance={"manifest_present": True, "validation_state": "Valid"})
    _, token, _ = sharing.share_link_create(job=job)
    html = Client().get(f"/s/{token}/").content.decode()
    assert f"carries Content Credentials (C2PA), signed by {settings.SERVICE_NAME}" in html


def test_every_link_that_does_not_open_gets_the_same_plain_404(sharing_on, funded_user):
    expired, revoked, deleted, taken_down, reported = (result_job(funded_user) for _ in range(5))
    tokens = {name: sharing.share_link_create(job=job)[1] for name, job in
              [("expired", expired), ("revoked", revoked), ("deleted", deleted), ("taken_down", taken_down),
               ("reported", reported)]}
    ShareLink.objects.filter(job=expired).update(expires_at=timezone.now() - timedelta(minutes=1))
    sharing.share_links_revoke(job=revoked)
    user_actions.job_delete(job=deleted)
    takedowns.job_take_down(job_id=taken_down.id)
    TakedownReport.objects.create(reporter_name="Pat", reporter_email="p@example.com", subject_id=reported.id)
    tokens["unknown"] = sharing.token_for("never-issued")

    answers = {}
    for name, token in tokens.items():
        response = Client().get(f"/s/{token}/")
        assert response.status_code == 404, name
        assert_private_headers(response)
        answers[name] = CSRF_META.sub(b"", response.content)
    assert len(set(answers.values())) == 1, answers.keys()
    assert b"doesn\xe2\x80\x99t work" in answers["unknown"]


def test_links_stop_opening_when_the_deployment_turns_sharing_off(sharing_on, funded_user):
    _, token, _ = sharing.share_link_create(job=result_job(funded_user))
    assert Client().get(f"/s/{token}/").status_code == 200
    sharing_on.SHARE_LINKS_ENABLED = False
    assert Client().get(f"/s/{token}/").status_code == 404


def test_the_job_page_hides_sharing_when_it_is_off(settings, funded_user):
    settings.SHARE_LINKS_ENABLED = False
    job = result_job(funded_user)
    client = Client()
    client.force_login(funded_user)
    html = client.get(f"/jobs/{job.id}/").content.decode()
    assert 'id="share"' not in html and "Stop sharing" not in html
    assert client.post(f"/jobs/{job.id}/share").status_code == 302
    assert not ShareLink.objects.exists()


def test_share_from_the_job_page_and_open_it_without_logging_in(sharing_on, new_page, live_server, funded_user,
                                                               artifacts):
    job = result_job(funded_user)
    page = new_page()
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/{job.id}/")
    page.get_by_role("button", name="Share", exact=True).click()

    link = page.get_by_label("Share link")
    expect(link).to_have_value(re.compile(rf"^{re.escape(live_server.url)}/s/[A-Za-z0-9_-]{{43}}/$"))
    url = link.input_value()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.get_by_role("button", name="Copy").click()
    expect(page.locator("#share-copied")).to_have_text(re.compile("Copied|copy"))
    page.screenshot(path=artifacts / "70-share-job-page.png")

    stranger = new_page()  # a fresh context: no session, no cookies
    response = stranger.goto(url)
    assert response.status == 200
    assert response.headers["x-robots-tag"] == "noindex, nofollow"
    expect(stranger.locator("#share-label")).to_contain_text("AI-generated")
    expect(stranger.locator(".aigc-label")).to_be_visible()
    stranger.wait_for_function("document.getElementById('shared-image').naturalWidth > 0")
    expect(stranger.get_by_role("link", name="Log in")).to_be_visible()  # not signed in as anyone
    expect(stranger.get_by_text(ALICE["username"])).to_have_count(0)
    stranger.screenshot(path=artifacts / "71-share-public-page.png")

    page.get_by_role("button", name="Stop sharing").click()
    expect(page.get_by_role("button", name="Share", exact=True)).to_be_visible()
    assert stranger.goto(url).status == 404


def test_staff_see_a_jobs_share_links_read_only_in_the_admin(sharing_on, funded_user, admin_client):
    job = result_job(funded_user)
    _, token, _ = sharing.share_link_create(job=job)
    sharing.share_links_revoke(job=job)
    sharing.share_link_create(job=job)

    html = admin_client.get(f"/admin/webapp/job/{job.id}/change/").content.decode()

    assert "Share links" in html
    assert html.count(">revoked<") == 1 and html.count(">active<") == 1
    assert token not in html and 'name="share_links-0-expires_at"' not in html  # shown, not editable


def test_sharing_is_on_out_of_the_box(funded_user):
    """Without VISAGE_SHARE_LINKS_ENABLED in the environment, a finished swap's page offers Share."""
    from webapp import settings as shipped

    assert shipped.SHARE_LINKS_ENABLED is True and settings.SHARE_LINKS_ENABLED is True
    job = result_job(funded_user)
    client = Client()
    client.force_login(funded_user)
    html = client.get(f"/jobs/{job.id}/").content.decode()
    assert 'id="share"' in html and "onfocus=" not in html  # no inline handler (the CSP blocks them)
    assert client.post(f"/jobs/{job.id}/share").status_code == 302
    assert ShareLink.objects.filter(job=job).count() == 1


def test_the_share_page_does_not_tell_the_owners_account_id(funded_user, user_b, settings):
    """The page's URLs name the result's key: with the owner's (sequential) account id in it, anyone
    holding two links could tell they are the same person's, and how many accounts there are."""
    settings.SHARE_LINKS_ENABLED = True
    job = stored_result_job(user_b, width=200, height=200)
    _, token, _ = sharing.share_link_create(job=job)
    html = Client().get(f"/s/{token}/").content.decode()
    assert "X-Amz-Signature" in html  # the page shows the result
    assert f"/{settings.S3_RESULTS_BUCKET}/{user_b.id}/" not in html
