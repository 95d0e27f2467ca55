"""API contract: auth, isolation, validation (problem+json, nothing stored), idempotency, schema."""

from __future__ import annotations

import struct
import zlib

import django_rq
import numpy as np
import pytest
from django.conf import settings
from rest_framework.test import APIClient

from tests.helpers.images import encode
from tests.helpers.problems import assert_problem
from tests.helpers.uploads import nothing_stored
from tests.webapp.conftest import post_job
from webapp.jobs.models import Job
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)


def png_declaring(width: int, height: int) -> bytes:
    """A tiny valid-looking PNG whose header claims width×height pixels (a decompression bomb)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 64)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


# --- authentication and isolation ---------------------------------------------------------------


def test_anonymous_gets_401_problem():
    client = APIClient()
    assert_problem(client.get("/api/v1/jobs"), 401, "not_authenticated")
    assert_problem(client.get("/api/v1/me"), 401, "not_authenticated")


def test_token_login_and_revoke(funded_user):
    client = APIClient()
    wrong = client.post("/api/v1/auth/token", {"username": "alice", "password": "nope"}, format="json")
    assert_problem(wrong, 401, "authentication_failed")
    response = client.post("/api/v1/auth/token", {"username": "alice", "password": "alice-pass-123"}, format="json")
    assert response.status_code == 201
    token = response.json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    me = client.get("/api/v1/me")
    assert me.status_code == 200 and me.json()["username"] == "alice"
    assert float(me.json()["available"]) == 1000
    assert client.delete("/api/v1/auth/token").status_code == 204
    assert_problem(client.get("/api/v1/me"), 401, "authentication_failed")


def test_other_users_job_is_404_everywhere(api_a, api_b, astronaut_pair):
    source, target, _ = astronaut_pair
    job = post_job(api_a, source, target).json()
    for response in (
        api_b.get(f"/api/v1/jobs/{job['id']}"),
        api_b.post(f"/api/v1/jobs/{job['id']}/cancel"),
        api_b.delete(f"/api/v1/jobs/{job['id']}"),
    ):
        assert_problem(response, 404, "not_found")
    assert api_b.get("/api/v1/jobs").json()["count"] == 0
    assert Job.objects.get(id=job["id"]).state == "created"  # untouched by B's attempts
    anonymous = APIClient()
    assert_problem(anonymous.get(f"/api/v1/jobs/{job['id']}"), 401, "not_authenticated")


# --- validation: 400 problem+json, nothing stored --------------------------------------------------


def test_missing_file(api_a, astronaut_pair):
    source, _, _ = astronaut_pair
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = api_a.post(
        "/api/v1/jobs", {"source": SimpleUploadedFile("s.png", source), "consent": "true"}, format="multipart"
    )
    assert_problem(response, 400, "missing_file", field="target")
    assert nothing_stored()


def test_text_file_renamed_jpg(api_a, astronaut_pair):
    source, _, _ = astronaut_pair
    body = assert_problem(post_job(api_a, source, b"hello, I am not a photo\n" * 20), 400, "unsupported_media_type",
                          field="target")
    assert "JPEG, PNG, WebP, HEIC or AVIF" in body["detail"]
    assert nothing_stored()


def test_oversize_file(api_a, astronaut_pair, settings):
    settings.MAX_UPLOAD_BYTES = 50_000
    source, target, _ = astronaut_pair
    assert len(source) > 50_000
    assert_problem(post_job(api_a, source, target), 400, "file_too_large", field="source")
    assert nothing_stored()


def test_decompression_bomb_png_is_refused_without_decoding(api_a, astronaut_pair):
    source, _, _ = astronaut_pair
    bomb = png_declaring(30000, 30000)
    assert len(bomb) < 200
    body = assert_problem(post_job(api_a, source, bomb), 400, "image_too_large", field="target")
    assert "(900 MP)" in body["detail"]
    # Just over the limit: refused by our own check, with the size in the message.
    body = assert_problem(post_job(api_a, source, png_declaring(8000, 6000)), 400, "image_too_large", field="target")
    assert "8000×6000" in body["detail"]
    assert nothing_stored()


def test_tiny_and_truncated_images(api_a, astronaut_pair, astronaut_rgb):
    source, target, _ = astronaut_pair
    tiny = encode(astronaut_rgb[:32, :32])
    assert_problem(post_job(api_a, source, tiny), 400, "image_too_small", field="target")
    assert_problem(post_job(api_a, source, target[: len(target) // 2]), 400, "corrupt_image", field="target")
    assert nothing_stored()


def test_a_jpeg_claiming_a_size_its_data_lacks_is_refused(api_a, astronaut_pair, astronaut_rgb):
    """The SOF header says 6000×6000 (under the pixel limit), the data holds 64×64: libjpeg would
    pad the missing rows silently, so the inspection refuses it from the data's size."""
    source, _, _ = astronaut_pair
    data = bytearray(encode(astronaut_rgb[:64, :64], "JPEG"))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = (6000).to_bytes(2, "big") * 2  # height, width
    problem = assert_problem(post_job(api_a, source, bytes(data)), 400, "corrupt_image", field="target")
    assert "6000×6000" in problem["detail"]
    assert nothing_stored()


def test_the_smallest_real_jpegs_pass_the_data_size_check():
    """No false refusal: a flat grey photo (the least data per pixel) with optimised Huffman
    tables, baseline and progressive, and a grayscale one, all pass."""
    from webapp.media.validation import inspect_image

    flat = np.full((3000, 2000, 3), 128, np.uint8)
    for image, options in ((flat, {"optimize": True}), (flat, {"progressive": True}),
                           (flat[:, :, 0], {"optimize": True, "quality": 1})):
        data = encode(image, "JPEG", **options)
        assert inspect_image(data, field="target", media_type="image/jpeg").width == 2000, options


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"mode": "turbo"}, "mode"),
        ({"resolution": "4k"}, "resolution"),
        ({"faces": "all"}, "faces"),
        ({"faces": "reference"}, "reference_face_index"),
        ({"face_index": "-1"}, "face_index"),
        ({"webhook_url": "not a url"}, "webhook_url"),
    ],
)
def test_unknown_option_values(api_a, astronaut_pair, fields, field):
    source, target, _ = astronaut_pair
    assert_problem(post_job(api_a, source, target, **fields), 400, "validation_error", field=field)
    assert nothing_stored()


def test_unknown_state_filter(api_a):
    assert_problem(api_a.get("/api/v1/jobs?state=done"), 400, "validation_error", field="state")


def test_insufficient_credit_is_402_and_stores_nothing(user_b, astronaut_pair):
    from tests.webapp.conftest import api_client_for

    client = api_client_for(user_b)  # no credits at all
    source, target, _ = astronaut_pair
    body = assert_problem(post_job(client, source, target), 402, "insufficient_credits")
    assert "available" in body and "required" in body
    assert nothing_stored()


# --- idempotency ----------------------------------------------------------------------------------


def test_same_idempotency_key_gives_one_job_and_one_hold(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    first = post_job(api_a, source, target, headers={"Idempotency-Key": "abc-123"})
    second = post_job(api_a, source, target, headers={"Idempotency-Key": "abc-123"})
    assert first.status_code == second.status_code == 201
    assert first.json()["id"] == second.json()["id"]
    assert second["Idempotent-Replayed"] == "true"
    assert Job.objects.count() == 1
    assert len(storage.list_keys(settings.S3_UPLOADS_BUCKET)) == 2
    assert django_rq.get_queue(settings.MODERATION_QUEUE).count == 1
    held = float(api_a.get("/api/v1/me").json()["held"])
    assert held == pytest.approx(float(first.json()["quote"]["hold_amount"]))


def test_same_idempotency_key_different_request_is_422(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    post_job(api_a, source, target, headers={"Idempotency-Key": "k1"})
    response = post_job(api_a, source, target, mode="hq", headers={"Idempotency-Key": "k1"})
    assert_problem(response, 422, "idempotency_key_mismatch")
    assert Job.objects.count() == 1


# --- listing, schema, headers ---------------------------------------------------------------------


def test_list_is_paginated_newest_first_and_filterable(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    ids = [post_job(api_a, source, target).json()["id"] for _ in range(3)]
    listing = api_a.get("/api/v1/jobs").json()
    assert listing["count"] == 3
    assert [job["id"] for job in listing["results"]] == list(reversed(ids))
    api_a.post(f"/api/v1/jobs/{ids[0]}/cancel")
    canceled = api_a.get("/api/v1/jobs?state=canceled").json()
    assert [job["id"] for job in canceled["results"]] == [ids[0]]


def test_request_id_and_retry_after(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    job = post_job(api_a, source, target, headers={"X-Request-Id": "req-42"})
    assert job["X-Request-Id"] == "req-42"
    polled = api_a.get(job.json()["urls"]["self"])
    assert polled["Retry-After"] == "2"


def test_openapi_schema_lists_every_endpoint():
    client = APIClient()
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json() if hasattr(response, "json") else None
    import json

    schema = json.loads(response.content)
    paths = schema["paths"]
    for path in ("/api/v1/jobs", "/api/v1/jobs/{job_id}", "/api/v1/jobs/{job_id}/cancel", "/api/v1/auth/token",
                 "/api/v1/me", "/api/v1/quotes", "/api/v1/ledger"):
        assert path in paths, sorted(paths)
    create = paths["/api/v1/jobs"]["post"]
    assert "multipart/form-data" in create["requestBody"]["content"]
    assert {"201", "400", "402", "422"} <= set(create["responses"])
    assert client.get("/api/docs/").status_code == 200


def test_throttled_create_is_429_with_retry_after(api_a, astronaut_pair, monkeypatch):
    from webapp.api.throttles import JobCreateThrottle

    rates = dict(JobCreateThrottle.THROTTLE_RATES, job_create="2/min")
    monkeypatch.setattr(JobCreateThrottle, "THROTTLE_RATES", rates)  # restored after the test
    source, target, _ = astronaut_pair
    assert post_job(api_a, source, target).status_code == 201
    ok = post_job(api_a, source, target)
    assert ok.status_code == 201 and "RateLimit-Policy" in ok
    limited = post_job(api_a, source, target)
    assert_problem(limited, 429, "throttled")
    assert int(limited["Retry-After"]) > 0
    assert Job.objects.count() == 2
    assert api_a.get("/api/v1/jobs").status_code == 200  # reads have their own budget
