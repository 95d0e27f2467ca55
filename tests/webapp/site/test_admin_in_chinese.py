"""Moderators read the review desk and the takedown queue in Simplified Chinese when their browser
says so: headings, buttons, column titles, actions and messages (Django's own admin words come
translated by Django); machine values (states, check names, codes) stay as they are."""

from __future__ import annotations

import pytest
from django.urls import reverse

from moderation.models import TakedownReport
from tests.webapp.site.conftest import stored_result_job

pytestmark = pytest.mark.django_db(transaction=True)

ZH = {"Accept-Language": "zh-Hans,zh;q=0.9"}


def _report(job) -> TakedownReport:
    return TakedownReport.objects.create(
        reporter_name="Ada Example",
        reporter_email="ada@example.com",
        relation="self",
        subject_id=job.id,
        face_embedding_kind="arcface512",
        face_vector=[0.01] * 512,
    )


def test_the_review_desk_speaks_chinese(funded_user, admin_client):
    job = stored_result_job(funded_user, width=640, height=480)
    desk = admin_client.get(reverse("admin:webapp_job_change", args=[job.id]), headers=ZH)
    assert desk["Content-Language"] == "zh-hans"
    page = desk.content.decode()
    assert 'aria-label="审核工作台"' in page
    assert "此任务没有记录任何审核项。" in page and f"{funded_user.username} 的历史记录" in page
    assert "个已完成" in page and "Moderator" not in page and "’s history" not in page
    assert ">审核<" in page  # the fieldset's title

    english = admin_client.get(reverse("admin:webapp_job_change", args=[job.id])).content.decode()
    assert 'aria-label="Moderator’s desk"' in english and "审核" not in english


def test_the_review_queue_and_its_actions_speak_chinese(funded_user, admin_client):
    stored_result_job(funded_user, width=640, height=480)
    page = admin_client.get(reverse("admin:webapp_job_changelist"), headers=ZH).content.decode()
    assert "通过所选的待审核任务" in page and "拒绝所选的待审核任务" in page  # the action menu
    assert "待人工审核" in page  # the queue filter
    assert ">扣费<" in page or "扣费</a>" in page  # a column title


def test_the_takedown_report_page_decides_in_chinese(funded_user, admin_client):
    job = stored_result_job(funded_user, width=640, height=480)
    report = _report(job)
    page = admin_client.get(
        reverse("admin:moderation_takedownreport_change", args=[report.pk]), headers=ZH
    ).content.decode()
    for label in ("保护该人脸", "下架该结果", "驳回"):
        assert f">{label}</button>" in page
    changelist = admin_client.get(reverse("admin:moderation_takedownreport_changelist"), headers=ZH).content.decode()
    assert "下架被举报的结果" in changelist and "举报人" in changelist and ">本人<" in changelist

    response = admin_client.post(
        reverse("admin:moderation_takedownreport_decide", args=[report.pk, "dismiss"]), headers=ZH, follow=True
    )
    assert f"举报 #{report.pk} 已驳回。" in response.content.decode()
