"""Direct, resumable uploads: parts PUT straight to the embedded S3 server with presigned URLs, a
failed part retried, a resume from the part list after a drop, validation of the stored object,
expiry of abandoned uploads, and a job made from upload ids that a real worker completes."""

from __future__ import annotations

import hashlib
import http.client
import uuid
from urllib.parse import urlsplit

import pytest
import requests
from django.conf import settings
from django.core.management import call_command
from django.core.signals import request_started
from django.test import Client
from django.utils import timezone

from billing.models import LedgerEntry
from tests.helpers.direct_uploads import put_part, send_parts, start_upload, upload_whole
from tests.helpers.hostile_media import jpeg_with_html
from tests.webapp.conftest import api_client_for, drain
from webapp.jobs.models import DirectUpload, Job
from webapp.jobs.services import direct_uploads
from webapp.media import multipart, storage

pytestmark = pytest.mark.django_db(transaction=True)

MIB = 1024 * 1024
BIG_VIDEO_BYTES = 100 * MIB


def pad_mp4(clip: bytes, total_bytes: int) -> bytes:
    """The real clip followed by one top-level `free` box (ISO-BMFF padding every demuxer skips):
    a valid video of exactly total_bytes."""
    padding = total_bytes - len(clip)
    return clip + padding.to_bytes(4, "big") + b"free" + bytes(padding - 8)


@pytest.fixture
def big_videos(settings):
    settings.VIDEO_ENABLED = True
    settings.VIDEO_MAX_BYTES = 120 * MIB
    return settings


class BodyBytesToDjango:
    """Counts the request bodies the web process is sent (Content-Length of every request)."""

    def __init__(self):
        self.total = 0

    def __call__(self, sender, environ=None, **kwargs):
        self.total += int((environ or {}).get("CONTENT_LENGTH") or 0)


def _dropped_part(part: dict, data: bytes, part_size_bytes: int) -> None:
    """The connection dies halfway through the part's body (the socket closes): S3 never stores it."""
    start = (part["part_number"] - 1) * part_size_bytes
    body = data[start : start + part["size_bytes"]]
    url = urlsplit(part["url"])
    connection = http.client.HTTPConnection(url.netloc, timeout=30)
    connection.putrequest("PUT", f"{url.path}?{url.query}", skip_accept_encoding=True)
    connection.putheader("Content-Length", str(len(body)))
    connection.endheaders()
    connection.send(body[: len(body) // 2])
    connection.close()


def test_a_100mb_video_in_parts_with_a_failure_and_a_resume_becomes_a_succeeded_job(
    api_a, funded_user, source_png, clip, big_videos
):
    video = pad_mp4(clip, BIG_VIDEO_BYTES)
    counter = BodyBytesToDjango()
    request_started.connect(counter)
    try:
        source = upload_whole(api_a, source_png, kind="image", content_type="image/png")
        created = start_upload(api_a, video, kind="video", content_type="video/mp4")
        assert created.status_code == 201, created.content
        upload = created.json()
        parts = upload["parts"]
        assert len(parts) == -(-BIG_VIDEO_BYTES // settings.DIRECT_UPLOAD_PART_BYTES) > 10
        # The part URLs name the S3 server, not the web server: the bytes go straight to storage.
        assert {urlsplit(p["url"]).netloc for p in parts} == {settings.S3_ENDPOINT}

        # Parts 1–6, part 3 failing midway and retried as it is.
        send_parts(upload, video, [1, 2])
        _dropped_part(parts[2], video, upload["part_size_bytes"])
        listed = api_a.get(f"/api/v1/uploads/{upload['id']}").json()["parts_received"]
        assert [p["part_number"] for p in listed] == [1, 2]
        assert put_part(parts[2], video, upload["part_size_bytes"]).status_code == 200
        send_parts(upload, video, [4, 5, 6])

        # Completing too early names what is missing.
        early = api_a.post(f"/api/v1/uploads/{upload['id']}/complete")
        assert early.status_code == 409 and early.json()["code"] == "upload_incomplete"
        assert "7" in early.json()["detail"]

        # The connection drops; the app restarts knowing only the upload id.
        resumed = api_a.get(f"/api/v1/uploads/{upload['id']}").json()
        have = {p["part_number"] for p in resumed["parts_received"]}
        assert have == {1, 2, 3, 4, 5, 6}
        missing = [p["part_number"] for p in resumed["parts"] if p["part_number"] not in have]
        assert send_parts(resumed, video, missing) == list(range(7, len(parts) + 1))

        completed = api_a.post(f"/api/v1/uploads/{upload['id']}/complete")
        assert completed.status_code == 200, completed.content
        body = completed.json()
        assert body["state"] == "ready"
        assert body["media"]["kind"] == "video" and body["media"]["size_bytes"] == BIG_VIDEO_BYTES
        assert body["media"]["sha256"] == hashlib.sha256(video).hexdigest()

        response = api_a.post(
            "/api/v1/jobs",
            {"source_upload": source["id"], "target_upload": upload["id"], "consent": "true"},
            format="multipart",
        )
        assert response.status_code == 201, response.content
        job = response.json()
        assert job["target"]["kind"] == "video" and job["target"]["frames"] == body["media"]["frames"]
    finally:
        request_started.disconnect(counter)
    # Everything the web process was sent, over all those calls: small JSON and form fields.
    assert counter.total < 64 * 1024

    drain()
    finished = api_a.get(f"/api/v1/jobs/{job['id']}").json()
    assert finished["state"] == "succeeded", finished["error"]
    assert DirectUpload.objects.get(id=upload["id"]).state == "used"
    # The stored upload became the job's target: deleted with the job's originals once it ended.
    assert not storage.exists(settings.S3_UPLOADS_BUCKET, DirectUpload.objects.get(id=upload["id"]).s3_key)


def test_another_users_upload_is_not_found(api_a, api_b, source_png):
    upload = upload_whole(api_a, source_png, kind="image", content_type="image/png")
    assert api_b.get(f"/api/v1/uploads/{upload['id']}").status_code == 404
    assert api_b.post(f"/api/v1/uploads/{upload['id']}/complete").status_code == 404
    response = api_b.post(
        "/api/v1/jobs",
        {"source_upload": upload["id"], "target_upload": upload["id"], "consent": "true"},
        format="multipart",
    )
    assert response.status_code == 404 and response.json()["code"] == "upload_not_found"
    assert Job.objects.count() == 0


def test_size_limit_at_create(api_a, settings):
    settings.VIDEO_ENABLED = True
    too_big = {"content_type": "video/mp4", "sha256": "0" * 64}
    response = api_a.post(
        "/api/v1/uploads",
        {"kind": "video", "size_bytes": settings.VIDEO_MAX_BYTES + 1, **too_big},
        format="json",
    )
    assert response.status_code == 400 and response.json()["code"] == "file_too_large"
    response = api_a.post(
        "/api/v1/uploads",
        {
            "kind": "image",
            "size_bytes": settings.MAX_UPLOAD_BYTES + 1,
            **too_big,
            "content_type": "image/png",
        },
        format="json",
    )
    assert response.status_code == 400 and response.json()["code"] == "file_too_large"
    assert DirectUpload.objects.count() == 0


def test_the_size_limit_is_checked_again_on_the_stored_object(api_a, clip, big_videos):
    created = start_upload(api_a, clip, kind="video", content_type="video/mp4").json()
    send_parts(created, clip, [1])
    big_videos.VIDEO_MAX_BYTES = len(clip) - 1  # the limit fell while the app was uploading
    big_videos.MAX_UPLOAD_BYTES = len(clip) - 1
    response = api_a.post(f"/api/v1/uploads/{created['id']}/complete")
    assert response.status_code == 400 and response.json()["code"] == "file_too_large"
    upload = DirectUpload.objects.get(id=created["id"])
    assert upload.state == "rejected" and not storage.exists(settings.S3_UPLOADS_BUCKET, upload.s3_key)


def test_the_stored_object_is_validated_like_a_posted_file(api_a):
    not_a_photo = b"%PDF-1.4 this is a document, not a photo" * 100
    created = start_upload(api_a, not_a_photo, kind="image", content_type="image/jpeg").json()
    send_parts(created, not_a_photo, [1])
    response = api_a.post(f"/api/v1/uploads/{created['id']}/complete")
    assert response.status_code == 400 and response.json()["code"] == "unsupported_media_type"
    upload = DirectUpload.objects.get(id=created["id"])
    assert upload.state == "rejected" and not storage.exists(settings.S3_UPLOADS_BUCKET, upload.s3_key)


@pytest.mark.parametrize(("declared", "content_type", "message"), [("image", "image/png", "must be a photo"),
                                                                    ("video", "video/mp4", "started as a video")])
def test_the_stored_file_must_be_the_kind_declared(api_a, clip, source_png, settings, declared, content_type, message):
    """The declared kind chose the size limit and is what the upload says it is: a video stored
    under "image" or a photo under "video" is refused, not reported as ready with the wrong kind."""
    settings.VIDEO_ENABLED = True
    data = clip if declared == "image" else source_png
    created = start_upload(api_a, data, kind=declared, content_type=content_type).json()
    send_parts(created, data, [1])
    response = api_a.post(f"/api/v1/uploads/{created['id']}/complete")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "unsupported_media_type" and message in response.json()["detail"]
    assert DirectUpload.objects.get(id=created["id"]).state == "rejected"


def test_a_stored_object_that_is_not_the_declared_file_is_refused(api_a, source_png):
    created = api_a.post(
        "/api/v1/uploads",
        {
            "kind": "image",
            "size_bytes": len(source_png),
            "content_type": "image/png",
            "sha256": hashlib.sha256(b"something else").hexdigest(),
        },
        format="json",
    ).json()
    send_parts(created, source_png, [1])
    response = api_a.post(f"/api/v1/uploads/{created['id']}/complete")
    assert response.status_code == 422 and response.json()["code"] == "checksum_mismatch"
    assert DirectUpload.objects.get(id=created["id"]).state == "rejected"


def test_an_upload_makes_one_job_only(api_a, source_png, astronaut_pair):
    source = upload_whole(api_a, source_png, kind="image", content_type="image/png")
    target = upload_whole(api_a, astronaut_pair[1], kind="image", content_type="image/jpeg")
    fields = {"source_upload": source["id"], "target_upload": target["id"], "consent": "true"}
    assert api_a.post("/api/v1/jobs", fields, format="multipart").status_code == 201
    again = api_a.post("/api/v1/jobs", fields, format="multipart")
    assert again.status_code == 409 and again.json()["code"] == "upload_not_ready"
    assert Job.objects.count() == 1


def test_a_job_cannot_use_an_unfinished_upload(api_a, source_png):
    source = upload_whole(api_a, source_png, kind="image", content_type="image/png")
    pending = start_upload(api_a, source_png, kind="image", content_type="image/png").json()
    response = api_a.post(
        "/api/v1/jobs",
        {"source_upload": source["id"], "target_upload": pending["id"], "consent": "true"},
        format="multipart",
    )
    assert response.status_code == 409 and response.json()["code"] == "upload_not_ready"


def test_abandoned_uploads_expire_unbilled(api_a, funded_user, source_png, astronaut_pair):
    ledger_before = LedgerEntry.objects.count()
    pending = start_upload(api_a, source_png, kind="image", content_type="image/png").json()
    send_parts(pending, source_png, [1])  # sent, never completed
    ready = upload_whole(api_a, astronaut_pair[1], kind="image", content_type="image/jpeg")  # never used
    rows = {row.id: row for row in DirectUpload.objects.all()}

    assert direct_uploads.direct_uploads_expire() == 0  # not yet
    later = timezone.now() + timezone.timedelta(seconds=settings.DIRECT_UPLOAD_EXPIRY_S + 1)
    assert direct_uploads.direct_uploads_expire(now=later) == 2

    pending_row = rows[uuid.UUID(pending["id"])]
    with pytest.raises(storage.ObjectMissing):  # the multipart upload (and its part) is aborted
        multipart.parts(settings.S3_UPLOADS_BUCKET, pending_row.s3_key, upload_id=pending_row.s3_upload_id)
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET) == []
    assert set(DirectUpload.objects.values_list("state", flat=True)) == {"expired"}
    assert LedgerEntry.objects.count() == ledger_before  # nothing held, nothing charged
    response = api_a.post(
        "/api/v1/jobs",
        {"source_upload": ready["id"], "target_upload": ready["id"], "consent": "true"},
        format="multipart",
    )
    assert response.status_code == 409 and response.json()["code"] == "upload_not_ready"
    call_command("visage_sweep")  # the operator's command runs the same sweep (nothing left to do)


def test_a_file_declared_as_html_is_never_served_as_html(api_a, funded_user, source_png, astronaut_pair):
    """A JPEG that is also a web page, declared text/html: the object was stored, and served to
    anyone opening it (the moderators' desk links uploads), as text/html from the storage's origin."""
    polyglot = jpeg_with_html(b"<html><script>alert(document.domain)</script></html>")
    done = upload_whole(api_a, polyglot, kind="image", content_type="text/html")
    assert done["state"] == "ready" and done["media"]["media_type"] == "image/jpeg"
    upload = DirectUpload.objects.get(id=done["id"])
    served = requests.get(storage.presigned_get(settings.S3_UPLOADS_BUCKET, upload.s3_key), timeout=30)
    assert served.status_code == 200 and "html" not in served.headers["Content-Type"]
    as_sniffed = storage.presigned_get(settings.S3_UPLOADS_BUCKET, upload.s3_key, content_type="image/jpeg")
    assert requests.get(as_sniffed, timeout=30).headers["Content-Type"] == "image/jpeg"


@pytest.mark.parametrize("declared", ["image/中文", "image/pngé"])
def test_a_content_type_that_is_not_ascii_is_a_400(api_a, source_png, declared):
    """It reached S3's signed headers: a 500, or a 503 that told the client to retry."""
    response = start_upload(api_a, source_png, kind="image", content_type=declared)
    assert response.status_code == 400 and "content_type" in response.json()["errors"], response.content


def test_a_part_url_takes_a_part_of_its_size_only(api_a, source_png):
    """Only the host was signed: a part URL of a 10-byte upload took 30 MiB, kept until the upload
    expired (a day of storage for anyone with an account). Its Content-Length is signed now."""
    upload = start_upload(api_a, source_png, kind="image", content_type="image/png").json()
    part = upload["parts"][0]
    oversized = requests.put(part["url"], data=source_png + b"\0" * 1024 * 1024, timeout=60)
    assert oversized.status_code == 403 and "SignatureDoesNotMatch" in oversized.text
    assert api_a.get(f"/api/v1/uploads/{upload['id']}").json()["parts_received"] == []
    assert put_part(part, source_png, upload["part_size_bytes"]).status_code == 200  # the right size still goes in
    assert api_a.post(f"/api/v1/uploads/{upload['id']}/complete").status_code == 200


def test_a_complete_that_fails_after_joining_the_parts_can_be_retried(api_a, source_png, monkeypatch):
    """Storage failing while the joined object was validated left the upload pending with its
    parts joined: every later complete and GET answered 503 (the parts could not be listed)."""
    upload = start_upload(api_a, source_png, kind="image", content_type="image/png").json()
    send_parts(upload, source_png, [p["part_number"] for p in upload["parts"]])
    validate = direct_uploads._validate_stored

    def storage_down_once(pending):
        monkeypatch.setattr(direct_uploads, "_validate_stored", validate)
        raise storage.StorageError("S3 went away while the object was read")

    monkeypatch.setattr(direct_uploads, "_validate_stored", storage_down_once)
    api_a.raise_request_exception = False
    assert api_a.post(f"/api/v1/uploads/{upload['id']}/complete").status_code == 503
    assert api_a.get(f"/api/v1/uploads/{upload['id']}").status_code == 200
    retried = api_a.post(f"/api/v1/uploads/{upload['id']}/complete")
    assert retried.status_code == 200 and retried.json()["state"] == "ready", retried.content


def test_deleting_a_user_in_the_admin_deletes_their_direct_uploads(django_user_model, source_png):
    """The rows cascaded with the user and nothing touched storage: the photos stayed in the bucket
    (a finished upload's object, an unfinished one's parts) and no sweep could find them again."""
    carol = django_user_model.objects.create_user(username="carol", password="carol-pass-123")
    api = api_client_for(carol)
    upload_whole(api, source_png, kind="image", content_type="image/png")
    unfinished = start_upload(api, source_png, kind="image", content_type="image/png").json()
    send_parts(unfinished, source_png, [1])
    admin = Client()
    admin.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "root-pass-123"))
    assert admin.post(f"/admin/auth/user/{carol.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not DirectUpload.objects.exists()
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET) == []
    parts = storage.client()._list_multipart_uploads(settings.S3_UPLOADS_BUCKET, prefix=f"{carol.pk}/").uploads
    assert list(parts) == []
