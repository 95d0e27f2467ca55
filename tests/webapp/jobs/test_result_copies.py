"""No unlabelled copy of a result reaches a browser: every URL of a result that the API or the site
hands out (the result, the compare view's "after", the gallery thumbnail, a video's poster, the
share page) answers bytes with the visible mark, the AI-generated metadata label and, when the
result is signed, Content Credentials."""

from __future__ import annotations

import html
import io
import json
import math
import re
from urllib.parse import unquote, urlparse

import cv2
import numpy as np
import pytest
import requests
from django.conf import settings
from django.test import Client
from PIL import Image

from swap.image_io import decode_image
from swap.video import io as video_io
from tests.helpers.marks import corner_contrast
from tests.helpers.video_jobs import post_video_job
from tests.webapp.conftest import drain, post_job
from webapp.jobs import sharing
from webapp.jobs.models import Job
from webapp.media import aigc, provenance, storage
from webapp.media.thumbnails import crop_box

pytestmark = pytest.mark.django_db(transaction=True)

URL = re.compile(r"https?://[^\s\"'<>\\]+")


def _urls_in(text: str) -> set[str]:
    return {url for url in URL.findall(html.unescape(text))}


def _strings(value) -> list[str]:
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


def _handed_out(api, owner, job: Job) -> dict[str, str]:
    """{S3 key: one URL of it} for every results-bucket URL the API and the site give for `job`."""
    site = Client()
    site.force_login(owner)
    _, token, _ = sharing.share_link_create(job=job)
    urls: set[str] = set()
    for response in (
        api.get(f"/api/v1/jobs/{job.id}"),
        api.get("/api/v1/jobs"),
        site.get(f"/jobs/{job.id}/status.json"),
        site.get(f"/jobs/status.json?ids={job.id}"),
    ):
        assert response.status_code == 200
        for text in _strings(json.loads(response.content)):
            urls |= _urls_in(text)
    for response in (site.get(f"/jobs/{job.id}/"), site.get("/"), Client().get(f"/s/{token}/")):
        assert response.status_code == 200
        urls |= _urls_in(response.content.decode())
    prefix = f"/{settings.S3_RESULTS_BUCKET}/"
    keys = {}
    for url in urls:
        path = unquote(urlparse(url).path)
        if path.startswith(prefix):
            keys[path[len(prefix) :]] = url
    return keys


def _check_labelled(data: bytes, media_type: str, job: Job) -> None:
    assert aigc.is_labelled(data)
    if media_type.startswith("image/"):
        assert aigc.IPTC_SOURCE_TYPE.encode() in data  # the XMP digital-source-type platforms read
    gb = aigc.gb45438_label_of(data)  # GB 45438's AIGC object: in XMP, or the MP4's metadata
    if "gb45438" in settings.AIGC_LABELS:
        assert gb is not None and gb["Label"] == "1", media_type
        assert gb["ProduceID"] == str(job.id) and gb["ContentProducer"] == settings.AIGC_PRODUCER
        assert set(gb) == {"Label", "ContentProducer", "ProduceID", "ReservedCode1", "ContentPropagator",
                           "PropagateID", "ReservedCode2"}
    else:
        assert gb is None  # the default profile adds nothing
    if job.provenance.get("manifest_present"):
        credentials = provenance.read(data, media_type=media_type)
        assert credentials.validation_state == "Trusted", credentials.failures
        assert credentials.assertions[provenance.ASSERTION_LABEL]["content_id"] == str(job.id)


def _before_as_shown(key: str, job: Job, image: np.ndarray) -> np.ndarray:
    """The original (the stored "before") in the geometry of the copy at `key`."""
    before = decode_image(storage.get_bytes(settings.S3_RESULTS_BUCKET, job.before_key), which="before")
    if key == job.thumbnail_key:  # the gallery's card-shaped crop around the faces
        x1, y1, x2, y2 = crop_box(before.shape[1], before.shape[0], job.engine_notes.get("face_boxes") or [])
        before = before[y1:y2, x1:x2]
    return cv2.resize(before, (image.shape[1], image.shape[0]), interpolation=cv2.INTER_AREA)


def _check_every_copy(api, owner, job: Job, *, first_frames=None, tmp_path=None) -> set[str]:
    mark = aigc.visible_mark()  # the style of the profile under test
    keys = _handed_out(api, owner, job)
    assert job.before_key in keys  # found the page's pictures at all (the original: not a result)
    del keys[job.before_key]
    for key, url in keys.items():
        response = requests.get(url, timeout=10)
        assert response.status_code == 200, key
        media_type = response.headers["Content-Type"]
        _check_labelled(response.content, media_type, job)
        if media_type == "video/mp4":
            path = tmp_path / "result.mp4"
            path.write_bytes(response.content)
            size = (job.processed_width, job.processed_height)
            # GB 45438: the mark from the first frame on, for at least the first 2 s (every frame here)
            info = video_io.probe(path)
            first_two_s = list(video_io.read_frames(path, size=size, stop=math.ceil(2 * info.fps)))
            assert len(first_two_s) == min(math.ceil(2 * info.fps), info.frames)
            for index, frame in enumerate(first_two_s):
                assert corner_contrast(frame, first_frames[index], mark) > 30, (key, index)
        else:
            with Image.open(io.BytesIO(response.content)) as opened:
                image = np.asarray(opened.convert("RGB"))[:, :, ::-1]
            assert corner_contrast(image, _before_as_shown(key, job, image), mark) > 30, key
    return set(keys)


GB45438 = ["iptc", "c2pa", "gb45438"]


@pytest.mark.parametrize("labels", [["iptc", "c2pa"], GB45438], ids=["default", "gb45438"])
def test_every_copy_of_a_photo_result_is_marked_and_labelled(api_a, funded_user, astronaut_pair, settings, labels):
    settings.SHARE_LINKS_ENABLED = True
    settings.AIGC_LABELS = labels
    settings.AIGC_PRODUCER = "91110000MA000000XX"
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target, resolution="original").json()["id"]
    drain()
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    assert job.provenance["manifest_present"] is True
    seen = _check_every_copy(api_a, funded_user, job)
    assert {job.result_key, job.after_key, job.thumbnail_key} <= seen, seen


@pytest.mark.parametrize("labels", [["iptc", "c2pa"], GB45438], ids=["default", "gb45438"])
def test_every_copy_of_a_video_result_is_marked_and_labelled(
    api_a, funded_user, source_png, clip, settings, tmp_path, labels
):
    settings.VIDEO_ENABLED = True
    settings.SHARE_LINKS_ENABLED = True
    settings.AIGC_LABELS = labels
    response = post_video_job(api_a, source_png, clip)
    assert response.status_code == 201, response.content
    drain()
    job = Job.objects.get(id=response.json()["id"])
    assert job.state == "succeeded", job.error_message
    (tmp_path / "clip.mp4").write_bytes(clip)
    originals = list(
        video_io.read_frames(tmp_path / "clip.mp4", size=(job.processed_width, job.processed_height))
    )
    seen = _check_every_copy(api_a, funded_user, job, first_frames=originals, tmp_path=tmp_path)
    # the video, its poster and thumbnail
    assert {job.result_key, job.after_key, job.thumbnail_key} <= seen, seen
