"""Problems in the client's language: `title` and `detail` follow Accept-Language (zh-Hans, en),
Content-Language says which; `code`, `type`, `status` and the field names in `errors` never change."""

from __future__ import annotations

import json

import pytest

from tests.helpers.problems import assert_problem
from tests.webapp.conftest import api_client_for, post_job
from webapp.api import problems

pytestmark = pytest.mark.django_db(transaction=True)

ZH = {"Accept-Language": "zh-Hans,zh;q=0.9,en;q=0.5"}


def has_chinese(text: str) -> bool:
    return any("\u4e00" <= char <= "\u9fff" for char in text)


def test_a_validation_problem_is_worded_in_chinese_with_english_machine_fields(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    response = post_job(api_a, source, target, consent=None, headers=ZH)
    body = assert_problem(response, 422, "consent_required", field="consent")
    assert response["Content-Language"] == "zh-hans"
    assert "Accept-Language" in response["Vary"]
    assert body["title"] == "需要确认你有权使用上传的人脸"
    assert body["detail"].startswith("每次换脸都需要确认你有权使用所上传的人脸")
    assert body["errors"] == {"consent": [body["detail"]]}
    assert body["type"].endswith("/errors/consent-required")


def test_the_same_problem_without_accept_language_is_english(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    response = post_job(api_a, source, target, consent=None)
    body = assert_problem(response, 422, "consent_required", field="consent")
    assert response["Content-Language"] == "en"
    assert body["title"] == "Consent to use the uploaded faces is required"
    assert body["detail"].startswith("Please confirm that you have the right to use the face(s)")
    assert not has_chinese(json.dumps(body, ensure_ascii=False))


@pytest.mark.parametrize("accept", ["zh-CN", "zh-cn,zh;q=0.8", "zh", "zh-SG"])
def test_mainland_and_generic_chinese_get_simplified_chinese(user_a, accept):
    response = api_client_for(user_a).get("/api/v1/jobs/not-a-job", headers={"Accept-Language": accept})
    body = assert_problem(response, 404, "not_found")
    assert response["Content-Language"] == "zh-hans"
    assert body["title"] == "未找到" and has_chinese(body["detail"])


@pytest.mark.parametrize("accept", ["fr-FR,fr;q=0.9", "en-GB", "de"])
def test_languages_the_site_does_not_speak_get_english(user_a, accept):
    response = api_client_for(user_a).get("/api/v1/jobs/not-a-job", headers={"Accept-Language": accept})
    body = assert_problem(response, 404, "not_found")
    assert response["Content-Language"] == "en"
    assert body["title"] == "Not found"


def test_upload_checks_name_the_field_in_chinese_and_keep_its_key(api_a, astronaut_pair):
    _, target, _ = astronaut_pair
    response = post_job(api_a, b"plain text, not a photo", target, headers=ZH)
    body = assert_problem(response, 400, "unsupported_media_type", field="source")
    assert body["detail"].startswith("人脸照片文件类型不受支持：请使用 ")
    assert body["title"] == "不支持该文件类型"
    assert response["Content-Language"] == "zh-hans"


def test_drf_own_field_messages_come_in_chinese_too(api_a, astronaut_pair):
    """DRF ships zh-Hans for its own messages (an empty file is refused by its FileField)."""
    _, target, _ = astronaut_pair
    body = assert_problem(post_job(api_a, b"", target, headers=ZH), 400, "validation_error", field="source")
    assert has_chinese(body["errors"]["source"][0]) and body["detail"].startswith("source: ")


def test_drf_and_authentication_problems_are_localised(client):
    response = client.get("/api/v1/jobs", headers=ZH)
    body = assert_problem(response, 401, "not_authenticated")
    assert body["title"] == "需要身份认证" and has_chinese(body["detail"])
    assert response["Content-Language"] == "zh-hans"


def test_a_body_refused_before_any_view_runs_is_localised_too(user_a, settings):
    """ProblemJsonMiddleware refuses an oversized body before LocaleMiddleware runs: it picks the
    language itself and says which."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = api_client_for(user_a).post(
        "/api/v1/quotes", json.dumps({"pad": "x" * 5000}), content_type="application/json", headers=ZH
    )
    body = assert_problem(response, 413, "request_too_large")
    assert response["Content-Language"] == "zh-hans"
    assert body["title"] == "请求过大" and "字节" in body["detail"]


def test_every_problem_title_has_a_chinese_translation():
    from django.utils import translation

    with translation.override("zh-hans"):
        untranslated = [code for code in problems.PROBLEM_CODES if not has_chinese(problems.problem_title(code))]
    assert not untranslated
    assert problems.problem_title("not_found") == "Not found"  # and English outside the override


def test_a_workers_stored_message_is_read_in_the_clients_language(api_a, funded_user):
    """Workers write `error.message` in English (they answer no request); its fixed sentences are in the
    catalogue, so the job reads in Chinese for a zh-Hans client while `code` stays as stored."""
    from django.utils import timezone

    from webapp.jobs.models import Job, Upload

    uploads = [
        Upload.objects.create(
            owner=funded_user, role=role, s3_key=f"{funded_user.id}/gone-{role}", sha256="0" * 64,
            media_type="image/jpeg", width=64, height=64, size_bytes=1, deleted_at=timezone.now(),
        )
        for role in ("source", "target")
    ]
    job = Job.objects.create(
        owner=funded_user, source=uploads[0], target=uploads[1], state="failed",
        error_code="engine_error", error_message="The face swap failed unexpectedly.",
    )
    chinese = api_a.get(f"/api/v1/jobs/{job.id}", headers=ZH)
    assert chinese.status_code == 200 and chinese["Content-Language"] == "zh-hans"
    assert chinese.json()["error"] == {"code": "engine_error", "message": "换脸意外失败。"}
    english = api_a.get(f"/api/v1/jobs/{job.id}")
    assert english.json()["error"] == {"code": "engine_error", "message": "The face swap failed unexpectedly."}
