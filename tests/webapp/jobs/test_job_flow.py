"""The astronaut pair through the API, a real worker, real S3: from upload to a downloadable result."""

from __future__ import annotations

import io
import json
import struct
import zlib

import pytest
import requests
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from PIL import Image

from billing.models import LedgerEntry
from tests.helpers.problems import assert_problem
from tests.webapp.conftest import drain, post_job, two_face_target
from webapp.jobs import events
from webapp.jobs.models import Job, Upload
from webapp.jobs.steps import image as image_step
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)


def test_astronaut_swap_succeeds_and_result_downloads(api_a, astronaut_pair):
    source, target, (width, height) = astronaut_pair
    response = post_job(api_a, source, target, mode="standard", resolution="original")
    assert response.status_code == 201, response.content
    job = response.json()
    assert job["state"] == "created"
    assert response["Location"].endswith(f"/api/v1/jobs/{job['id']}")
    assert job["options"]["mode"] == "standard"
    upload_keys = list(Upload.objects.values_list("s3_key", flat=True))
    assert all(storage.exists(settings.S3_UPLOADS_BUCKET, key) for key in upload_keys)

    drain()

    body = api_a.get(f"/api/v1/jobs/{job['id']}").json()
    assert body["state"] == "succeeded", body["error"]
    assert body["progress"] == 100
    assert body["metrics"]["gpu_seconds"] > 0
    assert body["cost"]["charge"] is not None
    # The result is a decodable image of the target's size, served by a presigned URL.
    downloaded = requests.get(body["result_url"], timeout=10)
    assert downloaded.status_code == 200
    image = Image.open(io.BytesIO(downloaded.content))
    assert image.size == (width, height)
    # The originals are gone from S3 once the job is done.
    assert not any(storage.exists(settings.S3_UPLOADS_BUCKET, key) for key in upload_keys)
    assert Upload.objects.filter(deleted_at__isnull=True).count() == 0


def test_no_face_in_target_fails_clearly_and_charges_nothing(api_a, astronaut_pair):
    from skimage import data as skdata

    from tests.helpers.images import encode

    source, _, _ = astronaut_pair
    response = post_job(api_a, source, encode(skdata.coffee(), "JPEG"))
    assert response.status_code == 201
    drain()
    body = api_a.get(response.json()["urls"]["self"]).json()
    # Screening checks face presence before any GPU time is spent.
    assert body["state"] == "rejected"
    assert body["error"]["code"] == "no_face_detected"
    assert "target" in body["error"]["message"]
    me = api_a.get("/api/v1/me").json()
    assert me["held"] == "0.00"  # amounts in the currency's minor unit
    assert me["available"] == "1000.00"


def test_cancel_before_processing_releases_hold_and_worker_skips_it(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    job = post_job(api_a, source, target).json()
    assert float(api_a.get("/api/v1/me").json()["held"]) > 0
    response = api_a.post(f"/api/v1/jobs/{job['id']}/cancel")
    assert response.status_code == 200
    assert response.json()["state"] == "canceled"
    drain()
    assert Job.objects.get(id=job["id"]).state == "canceled"
    assert float(api_a.get("/api/v1/me").json()["held"]) == 0
    again = api_a.post(f"/api/v1/jobs/{job['id']}/cancel")
    assert again.status_code == 409
    assert again["Content-Type"] == "application/problem+json"


def test_delete_purges_result_and_uploads(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    job = post_job(api_a, source, target).json()
    drain()
    finished = Job.objects.get(id=job["id"])
    assert finished.state == "succeeded"
    assert storage.exists(settings.S3_RESULTS_BUCKET, finished.result_key)
    assert api_a.delete(f"/api/v1/jobs/{job['id']}").status_code == 204
    assert not storage.exists(settings.S3_RESULTS_BUCKET, finished.result_key)
    assert api_a.get(f"/api/v1/jobs/{job['id']}").status_code == 404


def test_models_load_once_across_jobs(api_a, astronaut_pair):
    from swap.inference.sessions import model_load_counts

    source, target, _ = astronaut_pair
    post_job(api_a, source, target)
    drain()
    after_first = dict(model_load_counts())
    assert after_first, "the engine recorded no model loads at all"
    for _ in range(3):
        post_job(api_a, source, target)
    drain()
    assert Job.objects.filter(state="succeeded").count() == 4
    assert model_load_counts() == after_first


def test_transient_fault_during_screening_is_retried_not_failed(api_a, astronaut_pair, monkeypatch):
    import django_rq
    from django.conf import settings
    from django.db import OperationalError

    from moderation import services as moderation_services

    real_screen = moderation_services.screen_inputs
    calls = []

    def flaky_screen(**kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("database is locked")
        return real_screen(**kwargs)

    monkeypatch.setattr(moderation_services, "screen_inputs", flaky_screen)
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain([settings.MODERATION_QUEUE])
    assert Job.objects.get(id=job_id).state == "screening"  # not failed: a retry is scheduled
    queue = django_rq.get_queue(settings.MODERATION_QUEUE)
    (scheduled,) = queue.scheduled_job_registry.get_job_ids()
    queue.scheduled_job_registry.remove(scheduled)
    queue.enqueue_job(queue.fetch_job(scheduled))  # don't wait for the backoff
    drain()
    assert len(calls) == 2
    assert Job.objects.get(id=job_id).state == "succeeded"


def test_vip_plan_jobs_run_on_the_vip_queue(api_a, funded_user, astronaut_pair):
    import django_rq
    from django.conf import settings

    from billing.models import Account, PricePlan

    default = PricePlan.objects.get(is_default=True)
    vip = PricePlan.objects.create(
        name="VIP", is_default=False, gpu_queue="vip", unit_price=default.unit_price,
        coefficient_720p=default.coefficient_720p, coefficient_1080p=default.coefficient_1080p,
        original_coefficient_tiers=default.original_coefficient_tiers, weight_fast=default.weight_fast,
        weight_standard=default.weight_standard, weight_hq=default.weight_hq,
        minimum_charge=default.minimum_charge, currency=default.currency,
        minor_unit_exponent=default.minor_unit_exponent,
    )
    Account.objects.filter(user=funded_user).update(plan=vip)
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain([settings.MODERATION_QUEUE])
    from webapp.jobs import dispatch

    assert django_rq.get_queue("vip").get_job_ids() == [dispatch.run_task_id(job_id, 1)]
    assert django_rq.get_queue("default").count == 0
    drain()
    assert Job.objects.get(id=job_id).state == "succeeded"


def test_several_source_photos_are_averaged_screened_and_purged(api_a, astronaut_pair, astronaut_rgb):
    import cv2
    from django.conf import settings
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.helpers.images import encode
    from webapp.media import storage

    source, target, _ = astronaut_pair
    second = encode(cv2.resize(astronaut_rgb, (420, 420)), "JPEG")
    response = api_a.post("/api/v1/jobs", {
        "consent": "true",
        "source": [SimpleUploadedFile("a.png", source), SimpleUploadedFile("b.jpg", second)],
        "target": SimpleUploadedFile("t.jpg", target),
    }, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["source"]["photos"] == 2
    assert len(storage.list_keys(settings.S3_UPLOADS_BUCKET)) == 3
    drain()
    job = Job.objects.get(id=response.json()["id"])
    assert job.state == "succeeded", job.error_message
    assert job.engine_notes["source_photos"] == 2
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET) == []


def test_too_many_or_faceless_source_photos(api_a, astronaut_pair, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from skimage import data as skdata

    from tests.helpers.images import encode

    source, target, _ = astronaut_pair
    settings.MAX_SOURCE_PHOTOS = 2
    too_many = api_a.post("/api/v1/jobs", {
        "consent": "true",
        "source": [SimpleUploadedFile(f"{i}.png", source) for i in range(3)],
        "target": SimpleUploadedFile("t.jpg", target),
    }, format="multipart")
    assert too_many.status_code == 400 and too_many.json()["errors"]["source"]
    assert Job.objects.count() == 0

    faceless = api_a.post("/api/v1/jobs", {
        "consent": "true",
        "source": [SimpleUploadedFile("a.png", source), SimpleUploadedFile("coffee.jpg", encode(skdata.coffee(), "JPEG"))],
        "target": SimpleUploadedFile("t.jpg", target),
    }, format="multipart")
    assert faceless.status_code == 201
    drain()
    body = api_a.get(faceless.json()["urls"]["self"]).json()
    assert body["state"] == "rejected" and body["error"]["code"] == "no_face_detected"
    assert "source" in body["error"]["message"]


def test_cancel_while_running_leaves_no_result_and_no_charge(api_a, astronaut_pair, monkeypatch):
    """The user cancels after the swap finished but before the job recorded it: nothing is kept."""
    from django.conf import settings

    from billing.models import LedgerEntry
    from moderation import services as moderation_services
    from webapp.jobs.services import user_actions
    from webapp.media import storage

    real_screen_output = moderation_services.screen_output

    def cancel_then_screen(*, subject_id, pixels):
        user_actions.job_cancel(job=Job.objects.get(id=subject_id))
        return real_screen_output(subject_id=subject_id, pixels=pixels)

    monkeypatch.setattr(moderation_services, "screen_output", cancel_then_screen)
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain()
    assert Job.objects.get(id=job_id).state == "canceled"
    assert storage.list_keys(settings.S3_RESULTS_BUCKET) == []
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET) == []
    assert not LedgerEntry.objects.filter(job_id=job_id, kind="capture").exists()
    assert LedgerEntry.objects.filter(job_id=job_id, kind="release").count() == 1


def test_different_people_into_different_faces(api_a, astronaut_pair, astronaut_rgb):
    import json

    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.helpers.images import encode

    source, _, _ = astronaut_pair
    other = encode(astronaut_rgb[:, ::-1].copy(), "PNG")
    response = api_a.post("/api/v1/jobs", {
        "consent": "true",
        "source": [SimpleUploadedFile("a.png", source), SimpleUploadedFile("b.png", other)],
        "target": SimpleUploadedFile("two.jpg", two_face_target(astronaut_rgb)),
        "face_sources": json.dumps([{"face": 0, "source": 1}, {"face": 1, "source": 0}]),
    }, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["options"]["face_sources"] == [{"face": 0, "source": 1}, {"face": 1, "source": 0}]
    drain()
    job = Job.objects.get(id=response.json()["id"])
    assert job.state == "succeeded", job.error_message
    assert job.engine_notes["faces_swapped"] == 2


@pytest.mark.parametrize(
    "face_sources, message",
    [
        ('[{"face": 0, "source": 2}]', "names source photo 2"),
        ('[{"face": 0, "source": 0}, {"face": 0, "source": 1}]', "only one source"),
        ('[{"face": -1, "source": 0}]', "whole numbers"),
        ("not json", "JSON"),
        ("[]", "1 to 16"),
    ],
)
def test_face_sources_validation(api_a, astronaut_pair, face_sources, message):
    from django.core.files.uploadedfile import SimpleUploadedFile

    source, target, _ = astronaut_pair
    response = api_a.post("/api/v1/jobs", {
        "consent": "true",
        "source": [SimpleUploadedFile("a.png", source), SimpleUploadedFile("b.png", source)],
        "target": SimpleUploadedFile("t.jpg", target),
        "face_sources": face_sources,
    }, format="multipart")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "validation_error" and message in " ".join(body["errors"]["face_sources"])
    assert Job.objects.count() == 0


def test_face_index_out_of_range_in_face_sources_fails_clearly(api_a, astronaut_pair):
    import json

    from django.core.files.uploadedfile import SimpleUploadedFile

    source, target, _ = astronaut_pair
    response = api_a.post("/api/v1/jobs", {
        "consent": "true",
        "source": SimpleUploadedFile("a.png", source),
        "target": SimpleUploadedFile("t.jpg", target),
        "face_sources": json.dumps([{"face": 3, "source": 0}]),
    }, format="multipart")
    assert response.status_code == 201
    drain()
    body = api_a.get(response.json()["urls"]["self"]).json()
    assert body["state"] == "failed" and body["error"]["code"] == "face_index_out_of_range"
    assert "face 3 is out of range" in body["error"]["message"]
    assert body["queued_at"] is None and body["started_at"] is None  # said at screening: no GPU time
    assert api_a.get("/api/v1/me").json()["held"] == "0.00"


def test_a_face_index_the_target_lacks_fails_at_screening(api_a, astronaut_pair):
    from django.core.files.uploadedfile import SimpleUploadedFile

    source, target, _ = astronaut_pair
    response = api_a.post("/api/v1/jobs", {
        "consent": "true", "source": SimpleUploadedFile("a.png", source),
        "target": SimpleUploadedFile("t.jpg", target), "face_index": "2",
    }, format="multipart")
    assert response.status_code == 201
    drain()
    body = api_a.get(response.json()["urls"]["self"]).json()
    assert body["state"] == "failed" and body["error"]["code"] == "face_index_out_of_range"
    assert "face_index 2 is out of range: the target image has 1 face" in body["error"]["message"]
    assert body["queued_at"] is None
    assert api_a.get("/api/v1/me").json()["held"] == "0.00"


def _png_with_a_broken_stream(png: bytes) -> bytes:
    """The PNG's header, then one IDAT whose checksum holds over a compressed stream that breaks:
    what a file made to pass a structure check looks like."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    return png[:33] + chunk(b"IDAT", b"\x78\x9c" + b"\xff" * 4096) + chunk(b"IEND", b"")


def test_a_png_whose_checksums_hold_over_a_broken_stream_is_refused_at_upload(api_a, astronaut_pair):
    """The upload decodes a PNG in full: checksums alone would let a broken compressed stream through
    to screening. Both it and a cut PNG get a 400 naming the field, and nothing is held."""
    source, target, _ = astronaut_pair
    for damaged in (source[: len(source) // 2], _png_with_a_broken_stream(source)):
        assert_problem(post_job(api_a, damaged, target), 400, "corrupt_image", field="source")
    assert not Job.objects.exists() and not LedgerEntry.objects.filter(kind="hold").exists()


def _progress_events(user_id: int, job_id: str) -> list[tuple[str, int]]:
    client = events._client("quick")
    return [
        (data["state"], data["progress"])
        for _, fields in client.xrange(events.stream_key(user_id))
        if (data := json.loads(fields["event"]))["id"] == job_id
    ]


def test_a_quick_photo_job_publishes_no_progress_figures_between_running_and_succeeded(
    api_a, funded_user, astronaut_pair, monkeypatch
):
    """A figure nobody sees costs a row update, a read and an event to every open stream: a photo
    job says "swapped" (80) only when it has run PROGRESS_AFTER_S."""
    source, target, _ = astronaut_pair
    quick = post_job(api_a, source, target).json()["id"]
    drain()
    assert _progress_events(funded_user.id, quick)[-2:] == [("running", 5), ("succeeded", 100)]

    monkeypatch.setattr(image_step, "PROGRESS_AFTER_S", 0.0)  # as a slow swap would
    slow = post_job(api_a, source, target).json()["id"]
    drain()
    assert _progress_events(funded_user.id, slow)[-3:] == [("running", 5), ("running", 80), ("succeeded", 100)]


def test_each_step_reads_the_jobs_extra_source_photos_once(api_a, astronaut_pair):
    """The steps ask for the source photos several times (to fetch, analyse, swap and label them):
    read with the job, once a step (and the GPU step's end, which deletes the originals, once more)."""
    source, target, _ = astronaut_pair
    post_job(api_a, source, target)
    for queue, reads in ((["moderation"], 1), (None, 2)):
        with CaptureQueriesContext(connection) as queries:
            drain(queue)
        assert len([q for q in queries.captured_queries if "extra_sources" in q["sql"]]) == reads, queue


def test_a_source_photo_held_by_the_workers_is_not_read_from_s3_again(api_a, astronaut_pair, monkeypatch):
    """A selfie swapped into one target after another: screening and the GPU step find it by its
    upload's SHA-256 among the photos they decoded lately, and read only the new target (the old
    code read each job's source twice)."""
    source, target, _ = astronaut_pair
    post_job(api_a, source, target)
    drain()  # the workers (this process) now hold the source photo
    second = Job.objects.get(id=post_job(api_a, source, target).json()["id"])
    reads = []
    real_get = storage.get_bytes
    monkeypatch.setattr(storage, "get_bytes", lambda bucket, key: reads.append(key) or real_get(bucket, key))
    drain()
    second.refresh_from_db()
    assert second.state == "succeeded", second.error_message
    assert second.source.s3_key not in reads
    assert second.target.s3_key in reads
