"""Analyse once: screening stores each input's face analysis in the uploads bucket (one object a
job), the GPU step reuses it when its own pipeline would compute the same, and nothing of it
outlives the uploads.

Real API, real worker, real S3; the engine is the dlib + classical default (an empty models folder),
for both moderation's pipeline and the GPU worker's.
"""

from __future__ import annotations

import io
import re
from datetime import timedelta

import cv2
import dlib
import numpy as np
import pytest
from django.conf import settings
from django.utils import timezone

from moderation import services as moderation_services
from moderation.models import ProtectedFace, ProtectedIdentity
from swap.face_analysis import analysis_from_bytes
from tests.helpers.direct_uploads import upload_whole
from tests.helpers.images import encode
from tests.webapp.conftest import drain, post_job
from webapp.jobs import face_analysis
from webapp.jobs.engine import get_pipeline
from webapp.jobs.models import DirectUpload, Job
from webapp.jobs.services import stored_files
from webapp.jobs.steps import common as common_step
from webapp.jobs.steps import image as image_step
from webapp.jobs.steps import screen as screen_step
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)

GPU_QUEUES = list(settings.GPU_QUEUES)
ENTRY = re.compile(
    r"^(?P<upload>source|target)-(?P<sha256>[0-9a-f]{64})-(?P<width>\d+)x(?P<height>\d+)"
    r"-(?P<mode>standard|largest)-[0-9a-f]{16}$"
)


def stored_entries(job_id: str) -> dict[str, re.Match]:
    """{role: the name's parts} of each analysis in the job's one stored object ({} when none)."""
    job = Job.objects.get(id=job_id)
    try:
        data = storage.get_bytes(settings.S3_UPLOADS_BUCKET, face_analysis.object_key(job))
    except storage.ObjectMissing:
        return {}
    with np.load(io.BytesIO(data), allow_pickle=False) as stored:
        names = list(stored.files)
    return {ENTRY.match(name)["upload"]: ENTRY.match(name) for name in names}


def analysis_keys() -> list[str]:
    """Every face-analysis object in the uploads bucket, whatever job or upload it belongs to."""
    return [key for key in storage.list_keys(settings.S3_UPLOADS_BUCKET) if "face-analysis" in key]


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


def test_screening_stores_each_inputs_analysis_in_one_object_under_the_jobs_prefix(
    api_a, astronaut_pair, astronaut_rgb
):
    source, _, _ = astronaut_pair
    width, height = 1000, 936
    target = encode(cv2.resize(cv2.flip(astronaut_rgb, 1), (width, height)), "JPEG", quality=90)
    job_id = screened(api_a, source, target, resolution="720p")
    job = Job.objects.select_related("source", "target").get(id=job_id)
    assert analysis_keys() == [f"{job.owner_id}/{job_id}/face-analysis.npz"]
    keys = stored_entries(job_id)
    assert set(keys) == {"source", "target"}
    assert keys["source"]["sha256"] == job.source.sha256 and keys["target"]["sha256"] == job.target.sha256
    assert (int(keys["source"]["width"]), int(keys["source"]["height"])) == (512, 512)
    assert (keys["source"]["mode"], keys["target"]["mode"]) == ("largest", "largest")  # faces "one": largest face only
    # The target is analysed at the size the job swaps it: 720p scales 1000×936 down to 769×720.
    assert (int(keys["target"]["width"]), int(keys["target"]["height"])) == (769, 720)


def test_a_first_screening_reads_nothing_stored_and_a_screening_run_again_reuses_what_it_stored(
    api_a, astronaut_pair, monkeypatch
):
    """The first screening of a job is the first to analyse it: it asks S3 for no stored analysis
    (a GET that could only miss, one a job). A screening of the same job run again (RQ's retry, the
    sweeper's re-screen) reads what the earlier try stored and analyses nothing again."""
    from moderation import identities
    from webapp.jobs.steps import screen as screen_step

    reads: list[str] = []
    real_get = storage.get_bytes
    monkeypatch.setattr(storage, "get_bytes", lambda bucket, key: (reads.append(key), real_get(bucket, key))[1])
    source, target, _ = astronaut_pair
    job_id = screened(api_a, source, target)
    job = Job.objects.get(id=job_id)
    key = face_analysis.object_key(job)
    assert key not in reads
    assert set(stored_entries(job_id)) == {"source", "target"}

    detections = []
    analyser = identities.get_analyser()
    real_faces = analyser.faces
    monkeypatch.setattr(analyser, "faces", lambda *a, **kw: (detections.append(1), real_faces(*a, **kw))[1])
    Job.objects.filter(id=job_id).update(state="screening")  # as a worker that died mid-screening left it
    reads.clear()
    screen_step.run(job.id)
    assert key in reads
    assert detections == []
    assert Job.objects.get(id=job_id).state == "queued"


def test_a_cache_hit_skips_detection_and_swaps_pixel_identically(
    api_a, astronaut_pair, swapped_pixels, gpu_detections
):
    source, target, _ = astronaut_pair
    cached = screened(api_a, source, target)
    assert len(stored_entries(cached)) == 2
    drain(GPU_QUEUES)
    cached_job = Job.objects.get(id=cached)
    assert cached_job.state == "succeeded", cached_job.error_message
    assert gpu_detections == []  # neither the source nor the target was detected again
    assert cached_job.engine_notes["face_analysis"] == "cached"
    assert cached_job.stage_ms["detect"] == 0.0 and "analysis_cache" in cached_job.stage_ms
    # The analysis is billed once: its model time (measured at screening) counts for the job.
    assert cached_job.gpu_seconds > 0

    computed = screened(api_a, source, target)
    # As if screening had stored nothing.
    storage.delete(settings.S3_UPLOADS_BUCKET, face_analysis.object_key(Job.objects.get(id=computed)))
    drain(GPU_QUEUES)
    computed_job = Job.objects.get(id=computed)
    assert computed_job.state == "succeeded", computed_job.error_message
    assert len(gpu_detections) >= 2
    assert computed_job.engine_notes["face_analysis"] == "computed"

    assert np.array_equal(swapped_pixels[cached], swapped_pixels[computed])
    assert cached_job.engine_notes["face_boxes"] == computed_job.engine_notes["face_boxes"]


def test_a_large_jpeg_target_is_analysed_at_screening_on_the_gpu_steps_picture_and_reused(
    api_a, astronaut_pair, astronaut_rgb, swapped_pixels, gpu_detections, monkeypatch
):
    """A JPEG that libjpeg decodes reduced for the job's resolution (1920x1500 for 720p: at half
    size, then area-reduced to 922x720): screening analyses that picture, not its own whole decode
    scaled down, and the GPU step finds the analysis under the same size and reuses it."""
    source, _, _ = astronaut_pair
    big = cv2.resize(cv2.flip(astronaut_rgb, 1), (1920, 1500), interpolation=cv2.INTER_CUBIC)
    target = encode(big, "JPEG", quality=92)
    analysed: dict[str, np.ndarray] = {}
    analyse = screen_step.face_analysis.analyse_for_job

    def recording(analyser, image, **kw):
        analysed[kw["role"]] = image
        return analyse(analyser, image, **kw)

    monkeypatch.setattr(screen_step.face_analysis, "analyse_for_job", recording)
    job_id = screened(api_a, source, target, resolution="720p")
    np.testing.assert_array_equal(analysed["target"], common_step.target_photo(target, "720p"))
    entry = stored_entries(job_id)["target"]
    assert (int(entry["width"]), int(entry["height"])) == (922, 720)
    drain(GPU_QUEUES)
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    assert gpu_detections == [] and job.engine_notes["face_analysis"] == "cached"
    assert swapped_pixels[job_id].shape == (720, 922, 3)
    assert (job.processed_width, job.processed_height) == (922, 720)


def test_a_job_swapping_every_face_analyses_its_target_in_full_and_reuses_it(
    api_a, astronaut_pair, gpu_detections
):
    source, target, _ = astronaut_pair
    job_id = screened(api_a, source, target, faces="many")
    modes = {role: entry["mode"] for role, entry in stored_entries(job_id).items()}
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
    screened_names = {entry.group(0) for entry in stored_entries(job_id).values()}
    # The GPU worker now runs other dlib models than screening did (an upgrade between the two).
    monkeypatch.setattr(dlib, "__version__", f"{dlib.__version__}-upgraded")
    saved: list[set[str]] = []  # the names in the object each time the GPU step stores it
    put_bytes = storage.put_bytes

    def recording_put(bucket, key, data, content_type):
        if key.endswith("/face-analysis.npz"):
            with np.load(io.BytesIO(data), allow_pickle=False) as stored:
                saved.append(set(stored.files))
        put_bytes(bucket, key, data, content_type)

    monkeypatch.setattr(storage, "put_bytes", recording_put)
    drain(GPU_QUEUES)
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    assert job.engine_notes["face_analysis"] == "computed"
    assert len(gpu_detections) >= 2
    # Its own analyses were added under new names, next to (never over) screening's.
    [names] = saved
    assert screened_names < names and len(names) == 4


def test_no_face_data_outlives_the_uploads(api_a, astronaut_pair):
    from skimage import data as skdata

    source, target, _ = astronaut_pair
    succeeded = screened(api_a, source, target)
    drain(GPU_QUEUES)
    assert Job.objects.get(id=succeeded).state == "succeeded"
    assert analysis_keys() == []

    deleted = screened(api_a, source, target)
    assert len(stored_entries(deleted)) == 2
    assert api_a.delete(f"/api/v1/jobs/{deleted}").status_code == 204
    assert analysis_keys() == []

    # Rejected at screening (no face in the target): what screening stored goes with the uploads.
    response = post_job(api_a, source, encode(skdata.coffee(), "JPEG"))
    drain(["moderation"])
    rejected = Job.objects.get(id=response.json()["id"])
    assert rejected.state == "rejected"
    assert analysis_keys() == []
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET) == []


def test_a_finished_job_deletes_each_stored_upload_once(api_a, astronaut_pair, monkeypatch):
    """The purge after the GPU step: every object under the job's uploads prefix (originals, face
    analyses) deleted, all in one S3 request (each once), and the uploads marked deleted."""
    source, target, _ = astronaut_pair
    job_id = screened(api_a, source, target)
    stored = storage.list_keys(settings.S3_UPLOADS_BUCKET, prefix=f"{Job.objects.get(id=job_id).owner_id}/{job_id}/")
    assert len(stored) == 3  # source, target and their analyses
    requests = []
    real_many, real_one = storage.delete_many, storage.delete
    monkeypatch.setattr(storage, "delete_many", lambda bucket, keys: (requests.append((bucket, sorted(keys))), real_many(bucket, keys))[1])
    monkeypatch.setattr(storage, "delete", lambda bucket, key: (requests.append((bucket, [key])), real_one(bucket, key))[1])
    drain(GPU_QUEUES)
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded"
    assert [r for r in requests if r[0] == settings.S3_UPLOADS_BUCKET] == [(settings.S3_UPLOADS_BUCKET, sorted(stored))]
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET, prefix=f"{job.owner_id}/{job_id}/") == []
    assert job.source.deleted_at is not None and job.target.deleted_at is not None


def test_no_face_data_outlives_a_job_made_of_direct_uploads(api_a, astronaut_pair):
    """A mobile client's uploads lie outside the job's prefix (`<owner>/direct/<id>`): the job's
    face analyses must still go with them."""
    source, target, _ = astronaut_pair
    uploads = [upload_whole(api_a, data, kind="image", content_type=media_type)
               for data, media_type in ((source, "image/png"), (target, "image/jpeg"))]
    fields = {"source_upload": uploads[0]["id"], "target_upload": uploads[1]["id"], "consent": "true"}
    response = api_a.post("/api/v1/jobs", fields, format="multipart")
    assert response.status_code == 201, response.content
    job_id = response.json()["id"]
    drain(["moderation"])
    assert set(stored_entries(job_id)) == {"source", "target"}
    drain(GPU_QUEUES)
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    assert job.engine_notes["face_analysis"] == "cached"
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET) == []  # originals and face data alike


def test_the_sweep_deletes_face_data_that_older_versions_left_beside_direct_uploads(api_a, astronaut_pair):
    source, _, _ = astronaut_pair
    upload = upload_whole(api_a, source, kind="image", content_type="image/png")  # a live upload: kept
    key = DirectUpload.objects.get(id=upload["id"]).s3_key
    leaked = f"{key}.face-analysis/{'0' * 64}-512x512-largest-{'0' * 16}.npz"
    storage.put_bytes(settings.S3_UPLOADS_BUCKET, leaked, b"embeddings", face_analysis.MEDIA_TYPE)
    assert stored_files.uploads_sweep_orphans() == 0  # within the grace period
    later = timezone.now() + timedelta(seconds=settings.UPLOAD_ORPHAN_GRACE_S + 5)
    assert stored_files.uploads_sweep_orphans(now=later) == 1
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET) == [key]


def test_face_data_saved_after_the_user_canceled_is_deleted_at_once(api_a, astronaut_pair, monkeypatch):
    """Screening saved the analyses after the cancel had purged the job's uploads: a user's face
    embeddings outlived the job (until the orphan sweep, an hour later). Screening now deletes
    them itself when it finds the job ended."""
    screen = moderation_services.screen_inputs
    job_ids: list[str] = []

    def screened_then_canceled(**kwargs):
        outcome = screen(**kwargs)
        assert api_a.post(f"/api/v1/jobs/{job_ids[0]}/cancel").status_code == 200
        return outcome

    monkeypatch.setattr(moderation_services, "screen_inputs", screened_then_canceled)
    source, target, _ = astronaut_pair
    job_ids.append(post_job(api_a, source, target).json()["id"])
    drain(["moderation"])
    assert Job.objects.get(id=job_ids[0]).state == "canceled"
    assert analysis_keys() == []
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET) == []


def stored_faces(job_id: str) -> dict[str, list]:
    """{role: the faces of its stored analysis}."""
    job = Job.objects.get(id=job_id)
    entries = face_analysis.JobAnalyses(job)._stored()
    return {ENTRY.match(name)["upload"]: analysis_from_bytes(data).faces for name, data in entries.items()}


def test_target_faces_are_embedded_at_screening_only_for_a_protected_identity_check(
    api_a, astronaut_pair, gpu_detections
):
    """The GPU step needs the source's embedding (and a target's only in reference mode); moderation
    needs every face's only to compare it with protected identities. With nobody protected the
    target's face is stored without one, and the GPU step still reuses the analysis."""
    source, target, _ = astronaut_pair
    job_id = screened(api_a, source, target)
    faces = stored_faces(job_id)
    assert faces["source"][0].embedding is not None
    assert [face.embedding is None for face in faces["target"]] == [True]
    drain(GPU_QUEUES)
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    assert gpu_detections == [] and job.engine_notes["face_analysis"] == "cached"

    # Someone protected (a face far from the astronaut's): every face is embedded and compared.
    identity = ProtectedIdentity.objects.create(name="Someone else")
    ProtectedFace.objects.create(
        identity=identity, embedding_kind=faces["source"][0].embedding_kind, vector=[0.5] * 128
    )
    job_id = screened(api_a, source, target)
    assert all(face.embedding is not None for face in stored_faces(job_id)["target"])
