"""Video targets through the API, a real worker, real S3 and Redis."""

from __future__ import annotations

import io as stdlib_io

import django_rq
import pytest
import requests
import rq

from swap.video import io as video_io
from swap.video import synthetic
from swap.video.synthetic import ClipSpec
from tests.helpers.video_jobs import download_result, post_video_job
from tests.webapp.conftest import VIDEO_SPEC as SPEC
from tests.webapp.conftest import drain
from webapp.jobs import dispatch
from webapp.jobs.engine import get_pipeline
from webapp.jobs.models import Job
from webapp.jobs.steps import video as video_step

pytestmark = pytest.mark.django_db(transaction=True)



@pytest.fixture(autouse=True)
def video_enabled(settings):
    settings.VIDEO_ENABLED = True
    settings.VIDEO_SEGMENT_SECONDS = 10.0
    return settings


def _nothing_charged(client) -> None:
    me = client.get("/api/v1/me").json()
    assert float(me["held"]) == 0
    assert float(me["available"]) == 1000


def test_video_job_succeeds_with_same_frames_and_audio(api_a, source_png, clip, tmp_path):
    response = post_video_job(api_a, source_png, clip, resolution="720p")
    assert response.status_code == 201, response.content
    job = response.json()
    assert job["target"]["kind"] == "video"
    assert job["target"]["frames"] == SPEC.frames
    assert job["target"]["fps"] == SPEC.fps and job["target"]["has_audio"] is True
    assert abs(job["target"]["duration_seconds"] - SPEC.seconds) < 1 / SPEC.fps

    drain()

    body = api_a.get(f"/api/v1/jobs/{job['id']}").json()
    assert body["state"] == "succeeded", body["error"]
    assert body["progress"] == 100
    result = download_result(body, tmp_path)
    info = video_io.probe(result)
    assert (info.width, info.height, info.fps) == (256, 256, SPEC.fps)
    assert video_io.count_frames(result)[0] == SPEC.frames
    assert info.has_audio
    assert video_io.audio_duration(result) == pytest.approx(
        video_io.audio_duration(stdlib_io.BytesIO(clip)), abs=0.03
    )
    row = Job.objects.get(id=job["id"])
    assert row.frames_processed == SPEC.frames  # billing uses the frames actually processed
    assert (row.processed_width, row.processed_height) == (256, 256)
    assert row.result_media_type == "video/mp4"
    assert row.engine_notes["segments"] == 1
    # The gallery's poster: a WebP frame of the result, no wider than 480 px.
    poster = requests.get(body["result"]["thumbnail_url"], timeout=10)
    assert poster.status_code == 200 and poster.headers["Content-Type"] == "image/webp"
    from PIL import Image

    with Image.open(stdlib_io.BytesIO(poster.content)) as image:
        assert image.format == "WEBP" and max(image.size) <= 480


def test_long_video_runs_as_segments_and_joins_seamlessly(api_a, source_png, clip, tmp_path, video_enabled):
    video_enabled.VIDEO_SEGMENT_MAX_SECONDS = 0.7  # 24 frames at 12 fps → 3 segments of 8
    response = post_video_job(api_a, source_png, clip)
    assert response.status_code == 201, response.content
    job_id = response.json()["id"]

    drain()

    body = api_a.get(f"/api/v1/jobs/{job_id}").json()
    assert body["state"] == "succeeded", body["error"]
    row = Job.objects.get(id=job_id)
    assert row.engine_notes["segments"] == 3
    assert row.frames_processed == SPEC.frames
    result = download_result(body, tmp_path)
    counters = [synthetic.read_counter(frame) for frame in video_io.read_frames(result)]
    assert counters == list(range(SPEC.frames))  # nothing repeated, nothing dropped
    assert video_io.audio_duration(result) == pytest.approx(
        video_io.audio_duration(stdlib_io.BytesIO(clip)), abs=0.03
    )
    # Scratch parts are gone.
    from django.conf import settings

    from webapp.media import storage

    assert not [k for k in storage.list_keys(settings.S3_UPLOADS_BUCKET) if "/parts/" in k]


@pytest.mark.parametrize(("longest_seconds", "segments"), [(10.0, 2), (0.7, 4)], ids=["one-each", "longest"])
def test_segments_are_a_multiple_of_the_gpu_workers_taking_them(api_a, source_png, clip, video_enabled,
                                                               longest_seconds, segments):
    """With a second worker alive on the GPU queue beside the one that plans the job, the 2 s clip is
    cut into one segment for each (0.7 s at the shortest); when segments may be 0.7 s at the longest
    (three of them), into four equal ones (the last would otherwise be swapped alone). The joined
    result still holds every frame once. A worker that stopped without unregistering (its key gone)
    is not counted."""
    video_enabled.VIDEO_SEGMENT_SECONDS = 0.7
    video_enabled.VIDEO_SEGMENT_MAX_SECONDS = longest_seconds
    queue = django_rq.get_queue(dispatch.gpu_queue("default"))
    other = rq.Worker([queue], connection=queue.connection, name="gpu-worker-beside")
    gone = rq.Worker([queue], connection=queue.connection, name="gpu-worker-gone")
    other.register_birth()
    gone.register_birth()
    queue.connection.delete(gone.key)
    try:
        assert dispatch.live_workers(queue.name) == 1
        response = post_video_job(api_a, source_png, clip)
        assert response.status_code == 201, response.content
        drain()
    finally:
        other.register_death()
        gone.register_death()
    row = Job.objects.get(id=response.json()["id"])
    assert row.state == "succeeded", row.error_message
    assert row.engine_notes["segments"] == segments
    assert row.frames_processed == SPEC.frames


def test_truncated_video_is_rejected_at_upload(api_a, source_png, clip):
    response = post_video_job(api_a, source_png, clip[: len(clip) // 2])
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "corrupt_video"
    _nothing_charged(api_a)


def test_a_video_damaged_partway_fails_at_screening_without_retries(api_a, source_png, clip):
    """It demuxes (so upload accepts it) but a frame in the middle cannot be decoded: bytes that are
    damaged stay damaged, so the job fails at once with what to do, not 'try again' after retries."""
    damaged = bytearray(clip)
    middle = len(damaged) // 2
    damaged[middle : middle + len(damaged) // 20] = bytes(len(damaged) // 20)
    response = post_video_job(api_a, source_png, bytes(damaged))
    assert response.status_code == 201, response.content
    drain()
    body = api_a.get(response.json()["urls"]["self"]).json()
    assert body["state"] == "failed"
    assert body["error"]["code"] == "corrupt_video"
    assert "damaged" in body["error"]["message"] and "Export it again" in body["error"]["message"]
    _nothing_charged(api_a)


def test_audio_only_file_is_rejected_at_upload(api_a, source_png, tmp_path):
    path = tmp_path / "sound.m4a"
    synthetic.write_audio_only(path)
    response = post_video_job(api_a, source_png, path.read_bytes(), filename="sound.m4a")
    assert response.status_code == 400
    assert response.json()["code"] == "unsupported_media_type"
    assert "no video stream" in response.json()["detail"]
    _nothing_charged(api_a)


def test_video_over_the_duration_limit_is_rejected(api_a, source_png, clip, video_enabled):
    video_enabled.VIDEO_MAX_DURATION_S = 1.5
    response = post_video_job(api_a, source_png, clip)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "video_too_long"
    assert "2.0 s" in body["detail"] and "1.5 s" in body["detail"]
    _nothing_charged(api_a)


def test_video_with_too_many_frames_is_rejected(api_a, source_png, clip, video_enabled):
    video_enabled.VIDEO_MAX_FRAMES = 10
    response = post_video_job(api_a, source_png, clip)
    assert response.status_code == 400
    assert response.json()["code"] == "too_many_frames"


def test_video_without_a_face_fails_the_job_and_charges_nothing(api_a, source_png, tmp_path):
    path = tmp_path / "empty.mp4"
    synthetic.write_clip(path, ClipSpec(width=256, height=256, fps=12, seconds=1.0, face=False), None)
    response = post_video_job(api_a, source_png, path.read_bytes())
    assert response.status_code == 201, response.content
    drain()
    body = api_a.get(response.json()["urls"]["self"]).json()
    # Moderation's frame screening finds no face and rejects it before the GPU (the GPU step has
    # the same check, for deployments whose moderation lets it through): either way, no_face_detected.
    assert body["state"] in ("failed", "rejected")
    assert body["error"]["code"] == "no_face_detected"
    assert "video" in body["error"]["message"]
    _nothing_charged(api_a)


def test_videos_are_refused_when_disabled(api_a, source_png, clip, video_enabled):
    video_enabled.VIDEO_ENABLED = False
    response = post_video_job(api_a, source_png, clip)
    assert response.status_code == 400
    assert response.json()["code"] == "unsupported_media_type"


def test_gpu_step_fails_a_faceless_video_that_moderation_let_through(
    api_a, source_png, tmp_path, monkeypatch
):
    from moderation import services as moderation_services

    allow = moderation_services.ScreeningOutcome("allow")
    monkeypatch.setattr(moderation_services, "screen_inputs", lambda **kwargs: allow)
    monkeypatch.setattr(moderation_services, "screen_frames", lambda **kwargs: allow, raising=False)
    path = tmp_path / "empty.mp4"
    synthetic.write_clip(path, ClipSpec(width=256, height=256, fps=12, seconds=1.0, face=False), None)
    response = post_video_job(api_a, source_png, path.read_bytes())
    drain()
    body = api_a.get(response.json()["urls"]["self"]).json()
    assert body["state"] == "failed"
    assert body["error"]["code"] == "no_face_detected"
    assert "any frame of the target video" in body["error"]["message"]
    _nothing_charged(api_a)


def test_the_job_page_compares_a_video_frame_before_and_after(api_a, funded_user, source_png, clip):
    """A video result's page plays the marked video and compares its middle frame: the original
    frame and the swapped one, marked like the video."""
    import cv2
    import numpy as np
    from django.test import Client

    from webapp.media import aigc

    response = post_video_job(api_a, source_png, clip, resolution="720p")
    assert response.status_code == 201, response.content
    drain()
    job = Job.objects.get(id=response.json()["id"])
    assert job.state == "succeeded", job.error_message
    site = Client()
    site.force_login(funded_user)
    page = site.get(f"/jobs/{job.id}/").content.decode()
    assert "<video" in page and 'id="compare"' in page and "The middle frame, before and after" in page

    def shown(alt: str) -> np.ndarray:
        url = page.split(f'alt="{alt}"')[0].rsplit('src="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
        data = requests.get(url, timeout=10)
        assert data.status_code == 200, alt
        return cv2.imdecode(np.frombuffer(data.content, np.uint8), cv2.IMREAD_COLOR)

    before = shown("The original video’s middle frame")
    after = shown("The swapped video’s middle frame (AI-generated)")
    assert before.shape == after.shape
    assert np.abs(after.astype(int) - before.astype(int)).max(axis=2).mean() > 1  # the face changed
    # The badge in the compare's "after" (its corner differs from the original frame's).
    height, width = after.shape[:2]
    x, y, w, h = aigc.visible_mark().region(width, height)
    corner = np.abs(after[y : y + h, x : x + w].astype(int) - before[y : y + h, x : x + w].astype(int))
    assert corner.mean() > 30, corner.mean()


def test_the_gpu_steps_face_check_looks_quickly_first(clip, tmp_path, monkeypatch):
    """The GPU step's check that a clip shows a face: a quick look finds the astronaut in the first
    sampled frame; a faceless clip gets quick looks, then the full search, on every sampled frame."""
    pipeline = get_pipeline()
    searches: list[bool] = []
    analyse = pipeline.analyse
    monkeypatch.setattr(
        pipeline, "analyse", lambda frame, **kw: (searches.append(kw.get("retries", True)), analyse(frame, **kw))[1]
    )
    path = tmp_path / "clip.mp4"
    path.write_bytes(clip)
    video_step._require_a_face(path, (256, 256))
    assert searches == [False]

    searches.clear()
    empty = tmp_path / "empty.mp4"
    synthetic.write_clip(empty, ClipSpec(width=256, height=256, fps=12, seconds=1.0, face=False), None)
    with pytest.raises(video_step.NoFaceInVideo):
        video_step._require_a_face(empty, (256, 256))
    sampled = len(video_io.sample_indices(12, 1.0))
    assert searches == [False] * sampled + [True] * sampled
