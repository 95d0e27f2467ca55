"""English left on zh-Hans pages and answers, found by walking the site in Chinese: the run-again
face option, the account history's rows, a share refusal's state, the accepted photo formats."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from tests.webapp.conftest import api_client_for
from tests.webapp.site.conftest import stored_result_job
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


def zh_client(user=None) -> Client:
    client = Client(headers={"accept-language": "zh-hans"})
    if user is not None:
        client.force_login(user)
    return client


def test_the_run_again_face_option_is_in_chinese(funded_user, astronaut_pair):
    source, target, _ = astronaut_pair
    response = api_client_for(funded_user).post(
        "/api/v1/jobs",
        {"source": SimpleUploadedFile("a.png", source), "target": SimpleUploadedFile("b.jpg", target), "consent": "true"},
        format="multipart",
    )
    job = Job.objects.get(id=response.json()["id"])  # still screening: "Run again" is offered
    html = zh_client(funded_user).get(f"/jobs/{job.id}/").content.decode()
    assert 'id="run-again-submit"' in html
    assert ">Every face</option>" not in html and ">所有人脸</option>" in html


def test_the_account_history_rows_are_in_chinese():
    client = zh_client()
    signed_up = client.post(
        "/signup/", {"username": "lihua", "email": "", "password1": "x-Very-long-pass-42", "password2": "x-Very-long-pass-42"}
    )
    assert signed_up.status_code == 302
    history = re.search(r'<table class="table history">.*?</table>', client.get("/account/").content.decode(), re.S)
    assert "Credits added" not in history.group(0) and "sign-up credits" not in history.group(0)
    assert "已添加积分" in history.group(0) and "注册赠送积分" in history.group(0)


def test_a_share_refusal_names_the_state_in_chinese(funded_user, settings):
    settings.SHARE_LINKS_ENABLED = True
    job = stored_result_job(funded_user, width=200, height=200, state="failed")
    response = api_client_for(funded_user).post(f"/api/v1/jobs/{job.id}/share", headers={"accept-language": "zh-hans"})
    assert response.status_code == 409
    assert response.json()["detail"] == "只有已完成的换脸才能分享；此换脸当前为失败。"


def test_the_accepted_photo_formats_are_in_chinese(funded_user):
    response = zh_client(funded_user).post(
        "/jobs/new/",
        {"mode": "fast", "consent": "true",
         "source": SimpleUploadedFile("a.png", b"not an image"), "target": SimpleUploadedFile("b.jpg", b"nope")},
    )
    assert response.status_code == 400
    assert "JPEG、PNG、WebP、HEIC 或 AVIF" in response.context["errors"]["source"]
