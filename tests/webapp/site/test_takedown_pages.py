"""A result taken down after a report: its owner is told so (not that it expired), and moderators
decide on a report's own admin page, whose list fits a laptop screen."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from moderation.models import ProtectedIdentity, TakedownReport
from tests.webapp.site.conftest import stored_result_job
from webapp.jobs import takedowns
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)


def _report(job, **fields) -> TakedownReport:
    fields = {"relation": "self", "reporter_name": "Ada Example", **fields}
    return TakedownReport.objects.create(
        reporter_email="ada@example.com",
        link=f"https://visage.example/jobs/{job.id}/",
        subject_id=job.id,
        face_embedding_kind="arcface512",
        face_vector=[0.01] * 512,
        **fields,
    )


def _owner_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_owner_is_told_the_result_was_taken_down(funded_user, admin_client):
    job = stored_result_job(funded_user, width=640, height=480)
    report = _report(job)
    changelist = reverse("admin:moderation_takedownreport_changelist")
    admin_client.post(changelist, {"action": "take_down_result", "_selected_action": [report.pk]})

    owner = _owner_client(funded_user)
    page = owner.get(reverse("job-detail", args=[job.id])).content.decode()
    assert "This result was taken down" in page and "our moderators removed it" in page
    assert "kept for a limited time" not in page
    assert ">Done<" not in page and ">Taken down<" in page  # the status says so too
    assert owner.get(reverse("job-status", args=[job.id])).json()["label"] == "Taken down"
    gallery = owner.get(reverse("dashboard")).content.decode()
    assert "Taken down after a report" in gallery and "after the retention period" not in gallery


def test_a_result_that_expired_still_says_so(funded_user):
    job = stored_result_job(funded_user, width=640, height=480)
    type(job).objects.filter(id=job.id).update(media_deleted_at=job.created_at)
    page = _owner_client(funded_user).get(reverse("job-detail", args=[job.id])).content.decode()
    assert "kept for a limited time" in page and "taken down" not in page.lower()


def test_the_report_page_has_the_three_decisions_and_they_work(funded_user, admin_client):
    job = stored_result_job(funded_user, width=640, height=480)
    report, other = _report(job), _report(job)
    page = admin_client.get(
        reverse("admin:moderation_takedownreport_change", args=[report.pk])
    ).content.decode()
    for label in ("Protect the face", "Take the result down", "Dismiss"):
        assert f">{label}</button>" in page

    def decide(target, decision):
        url = reverse("admin:moderation_takedownreport_decide", args=[target.pk, decision])
        assert admin_client.get(url).status_code == 405  # a decision is a POST only
        response = admin_client.post(url)
        assert response.status_code == 302 and response["Location"].endswith(f"/{target.pk}/change/")
        target.refresh_from_db()

    decide(report, "protect")
    assert report.status == "resolved" and report.protected_identity == ProtectedIdentity.objects.get()
    decide(report, "take-down")
    job.refresh_from_db()
    assert report.result_taken_down and job.media_deleted_at is not None and not job.result_visible
    assert job.result_key not in storage.list_keys(settings.S3_RESULTS_BUCKET)
    decide(other, "dismiss")
    assert other.status == "dismissed" and not other.result_taken_down
    assert takedowns.taken_down_job_ids([job.id]) == {job.id}


def test_people_without_the_review_permission_cannot_decide(funded_user, django_user_model):
    job = stored_result_job(funded_user, width=640, height=480)
    report = _report(job)
    staff = django_user_model.objects.create_user(username="clerk", password="clerk-pass-123", is_staff=True)
    client = _owner_client(staff)
    response = client.post(reverse("admin:moderation_takedownreport_decide", args=[report.pk, "take-down"]))
    assert response.status_code == 403
    report.refresh_from_db()
    assert report.status == "open" and not report.result_taken_down


def test_the_report_list_fits_a_laptop_screen(browser, live_server, artifacts, funded_user, django_user_model):
    admin = django_user_model.objects.create_superuser(
        username="root", password="root-pass-123", email="r@x.org"
    )
    long_name = "Maximiliane Alexandra von Hohenberg-Wittelsbach"  # and the longest relation label
    for relation in ("self", "representative", "other"):
        job = stored_result_job(funded_user, width=640, height=480)
        _report(job, relation=relation, reporter_name=long_name, details="That is me.")
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", admin.username)
    page.fill("#id_password", "root-pass-123")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}{reverse('admin:moderation_takedownreport_changelist')}")
    page.screenshot(path=str(artifacts / "takedown-list-1366.png"))
    table = page.locator("#result_list").bounding_box()
    width = page.evaluate("document.documentElement.clientWidth")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    context.close()
    assert table["x"] + table["width"] <= width and overflow <= 0, (table, width, overflow)
    print(f"takedown list at 1366 px: table {table['width']:.0f} px wide, right edge {table['x'] + table['width']:.0f} px")


# --- a report decided once -----------------------------------------------------------------


def _moderator_client(django_user_model, name):
    user = django_user_model.objects.create_user(username=name, password="mod-pass-123", is_staff=True)
    user.groups.add(Group.objects.get(name="moderator"))
    client = Client()
    client.force_login(user)
    return user, client


def _open_report():
    return TakedownReport.objects.create(reporter_name="Ada", reporter_email="a@example.com", relation="self",
                                         face_embedding_kind="arcface512", face_vector=[0.01] * 512)


def test_dismiss_on_the_page_does_not_undo_another_moderators_protection(django_user_model):
    first, as_first = _moderator_client(django_user_model, "first")
    _, as_second = _moderator_client(django_user_model, "second")
    report = _open_report()
    as_first.post(reverse("admin:moderation_takedownreport_decide", args=[report.pk, "protect"]))
    report.refresh_from_db()
    assert report.status == "resolved" and report.protected_identity is not None
    # The second moderator had the report open before and now clicks "Dismiss".
    as_second.post(reverse("admin:moderation_takedownreport_decide", args=[report.pk, "dismiss"]))
    report.refresh_from_db()
    assert report.status == "resolved", "a resolved report was turned into a dismissed one"
    assert report.handled_by == first


def test_bulk_dismiss_on_a_mixed_selection_leaves_decided_reports_alone(django_user_model):
    first, as_first = _moderator_client(django_user_model, "first")
    _, as_second = _moderator_client(django_user_model, "second")
    decided, still_open = _open_report(), _open_report()
    as_first.post(reverse("admin:moderation_takedownreport_decide", args=[decided.pk, "protect"]))
    as_second.post(reverse("admin:moderation_takedownreport_changelist"),
                   {"action": "dismiss", "_selected_action": [decided.pk, still_open.pk], "index": 0})
    decided.refresh_from_db()
    still_open.refresh_from_db()
    assert still_open.status == "dismissed"
    assert decided.status == "resolved" and decided.handled_by == first


def test_a_take_down_after_a_dismissal_says_so_and_the_dismissal_stands(funded_user, django_user_model):
    first, as_first = _moderator_client(django_user_model, "first")
    _, as_second = _moderator_client(django_user_model, "second")
    job = stored_result_job(funded_user, width=640, height=480)
    report = TakedownReport.objects.create(reporter_name="Ada", reporter_email="a@example.com", relation="self",
                                           subject_id=job.id)
    as_first.post(reverse("admin:moderation_takedownreport_decide", args=[report.pk, "dismiss"]))
    page = as_second.post(reverse("admin:moderation_takedownreport_decide", args=[report.pk, "take-down"]), follow=True)
    assert "already decided" in page.content.decode()
    report.refresh_from_db()
    job.refresh_from_db()
    assert report.status == "dismissed" and report.handled_by == first and not report.result_taken_down
    assert job.result_visible and job.media_deleted_at is None
