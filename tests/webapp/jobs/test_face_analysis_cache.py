"""Analyse once: screening stores each input's face analysis in the uploads bucket, the GPU
step reuses it when its own pipeline would compute the same, and nothing of it outlives the uploads.

Real API, real worker, real S3; the engine is the dlib + classical default (an empty models folder),
for both moderation's pipeline and the GPU worker's.
"""

from __future__ import annotations

import re

import cv2
import dlib
import numpy as np
import pytest
from django.conf import settings

from tests.helpers.images import encode
from tests.webapp.conftest import drain, post_job
from webapp.jobs.engine import get_pipeline
from webapp.jobs.models import Job
from webapp.jobs.steps import image as image_step
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)

GPU_QUEUES = list(settings.GPU_QUEUES)
KEY = re.compile(
    r"^\d+/(?P<job>[0-9a-f-]{36})/(?P<upload>source|target)\.face-analysis/"
    r"(?P<sha256>[0-9a-f]{64})-(?P<width>\d+)x(?P<height>\d+)-(?P<mode>standard|largest)-[0-9a-f]{16}\.npz$"
)


def analysis_keys(job_id: str | None = None) -> list[str]:
    keys = [key for key in storage.list_keys(settings.S3_UPLOADS_BUCKET) if ".face-analysis/" in key]
    return [key for key in keys if job_id is None or f"/{job_id}/" in key]


@pytest.fixture
def swapped_pixels(monkeypatch) -> dict[str, np.ndarray]:
    """The swapped image of each job as the GPU step holds it (unmarked, before any encoding): what
    output screening is given."""
    frames: dict[str, np.ndarray] = {}
    screen = image_step.moderation_services.screen_output

    def recording(*, subject_id, pixels):
        frames.setdefault(str(subject_id), pixels.copy())
        return screen(subject_id=subject_id, pixels=pixels)

    monkeypatch.setattr(image_step.moderation_services, "screen_output", recording)
    return frames


@pytest.fixture
def gpu_detections(monkeypatch) -> list[int]:
    """Every detector call of the GPU worker's pipeline (moderation's pipeline is another one)."""
    calls: list[int] = []
    detector = get_pipeline().detector
    detect = detector.detect
    monkeypatch.setattr(detector, "detect", lambda frame, **kw: calls.append(1) or detect(frame, **kw))
    return calls


def screened(api, source: bytes, target: bytes, **fields) -> str:
    response = post_job(api, source, target, **fields)
    assert response.status_code == 201, response.content
    drain(["moderation"])
    job_id = response.json()["id"]
    assert Job.objects.get(id=job_id).state == "queued"
    return job_id


def test_screening_stores_each_inputs_analysis_under_the_uploads_key(api_a, astronaut_pair, astronaut_rgb):
    source, _, _ = astronaut_pair
    width, height = 1000, 936
    target = encode(cv2.resize(cv2.flip(astronaut_rgb, 1), (width, height)), "JPEG", quality=90)
    job_id = screened(api_a, source, target, resolution="720p")
    job = Job.objects.select_related("source", "target").get(id=job_id)
    keys = {KEY.match(key)["upload"]: KEY.match(key) for key in analysis_keys(job_id)}
    assert set(keys) == {"source", "target"}
    assert keys["source"]["sha256"] == job.source.sha256 and keys["target"]["sha256"] == job.target.sha256
    assert (int(keys["source"]["width"]), int(keys["source"]["height"])) == (512, 512)
    assert (keys["source"]["mode"], keys["target"]["mode"]) == ("largest", "largest")  # faces "one": largest face only
    # The target is analysed at the size the job swaps it: 720p scales 1000×936 down to 769×720.
    assert (int(keys["target"]["width"]), int(keys["target"]["height"])) == (769, 720)


def test_a_cache_hit_skips_detection_and_swaps_pixel_identically(
    api_a, astronaut_pair, swapped_pixels, gpu_detections
):
    source, target, _ = astronaut_pair
    cached = screened(api_a, source, target)
    assert len(analysis_keys(cached)) == 2
    drain(GPU_QUEUES)
    cached_job = Job.objects.get(id=cached)
    assert cached_job.state == "succeeded", cached_job.error_message
    assert gpu_detections == []  # neither the source nor the target was detected again
    assert cached_job.engine_notes["face_analysis"] == "cached"
    assert cached_job.stage_ms["detect"] == 0.0 and "analysis_cache" in cached_job.stage_ms
    # The analysis is billed once: its model time (measured at screening) counts for the job.
    assert cached_job.gpu_seconds > 0

    computed = screened(api_a, source, target)
    for key in analysis_keys(computed):  # as if screening had stored nothing
        storage.delete(settings.S3_UPLOADS_BUCKET, key)
    drain(GPU_QUEUES)
    computed_job = Job.objects.get(id=computed)
    assert computed_job.state == "succeeded", computed_job.error_message
    assert len(gpu_detections) >= 2
    assert computed_job.engine_notes["face_analysis"] == "computed"

    assert np.array_equal(swapped_pixels[cached], swapped_pixels[computed])
    assert cached_job.engine_notes["face_boxes"] == computed_job.engine_notes["face_boxes"]


def test_a_job_swapping_every_face_analyses_its_target_in_full_and_reuses_it(
    api_a, astronaut_pair, gpu_detections
):
    source, target, _ = astronaut_pair
    job_id = screened(api_a, source, target, faces="many")
    modes = {KEY.match(key)["upload"]: KEY.match(key)["mode"] for key in analysis_keys(job_id)}
    assert modes == {"source": "largest", "target": "standard"}  # every face of the target is needed
    drain(GPU_QUEUES)
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    assert gpu_detections == [] and job.engine_notes["face_analysis"] == "cached"


def test_a_changed_analyser_signature_recomputes_instead_of_reusing(
    api_a, astronaut_pair, gpu_detections, monkeypatch
):
    source, target, _ = astronaut_pair
    job_id = screened(api_a, source, target)
    screened_keys = set(analysis_keys(job_id))
    # The GPU worker now runs other dlib models than screening did (an upgrade between the two).
    monkeypatch.setattr(dlib, "__version__", f"{dlib.__version__}-upgraded")
    seen: set[str] = set()
    store = image_step.face_analysis.store

    def recording_store(upload, image, analysis, *, pipeline, mode):
        seen.add(image_step.face_analysis.cache_key(upload, image, pipeline=pipeline, mode=mode))
        store(upload, image, analysis, pipeline=pipeline, mode=mode)

    monkeypatch.setattr(image_step.face_analysis, "store", recording_store)
    drain(GPU_QUEUES)
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    assert job.engine_notes["face_analysis"] == "computed"
    assert len(gpu_detections) >= 2
    # Its own analyses went under new keys (next to, never over, screening's).
    assert len(seen) == 2 and not seen & screened_keys


def test_no_face_data_outlives_the_uploads(api_a, astronaut_pair):
    from skimage import data as skdata

    source, target, _ = astronaut_pair
    succeeded = screened(api_a, source, target)
    drain(GPU_QUEUES)
    assert Job.objects.get(id=succeeded).state == "succeeded"
    assert analysis_keys(succeeded) == []

    deleted = screened(api_a, source, target)
    assert len(analysis_keys(deleted)) == 2
    assert api_a.delete(f"/api/v1/jobs/{deleted}").status_code == 204
    assert analysis_keys(deleted) == []

    # Rejected at screening (no face in the target): what screening stored goes with the uploads.
    response = post_job(api_a, source, encode(skdata.coffee(), "JPEG"))
    drain(["moderation"])
    rejected = Job.objects.get(id=response.json()["id"])
    assert rejected.state == "rejected"
    assert analysis_keys(str(rejected.id)) == []
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET) == []


def test_a_finished_job_deletes_each_stored_upload_once(api_a, astronaut_pair, monkeypatch):
    """The purge after the GPU step: every object under the job's uploads prefix (originals, face
    analyses) deleted, each by one S3 request, and the uploads marked deleted."""
    source, target, _ = astronaut_pair
    job_id = screened(api_a, source, target)
    stored = storage.list_keys(settings.S3_UPLOADS_BUCKET, prefix=f"{Job.objects.get(id=job_id).owner_id}/{job_id}/")
    assert len(stored) >= 4  # source, target and their analyses
    deletes = []
    real = storage.delete
    monkeypatch.setattr(storage, "delete", lambda bucket, key: (deletes.append((bucket, key)), real(bucket, key))[1])
    drain(GPU_QUEUES)
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded"
    uploads = [(settings.S3_UPLOADS_BUCKET, key) for key in stored]
    assert sorted(d for d in deletes if d[0] == settings.S3_UPLOADS_BUCKET) == sorted(uploads)
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET, prefix=f"{job.owner_id}/{job_id}/") == []
    assert job.source.deleted_at is not None and job.target.deleted_at is not None
