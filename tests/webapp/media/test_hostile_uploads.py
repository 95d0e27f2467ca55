"""Uploads found by trying the API as an attacker or with broken tools: each gets a specific 4xx (or
is accepted, where the file is fine), never a 500, and a refused one leaves no job and no hold."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from billing.choices import EntryKind
from billing.models import LedgerEntry
from swap.errors import InvalidImage
from swap.image_io import decode_image
from swap.video import io as video_io
from tests.helpers import hostile_media
from tests.helpers.problems import assert_problem
from tests.webapp.conftest import post_job
from webapp.jobs.models import Job
from webapp.media.validation import UploadRejected, inspect_image, inspect_upload

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_tiny_progressive_jpeg_claiming_196_megapixels_is_refused_before_decoding(api_a, astronaut_pair):
    """Only a sequential JPEG decodes at a reduced size in bounded memory; this 237-byte file was
    accepted (the 200 MP JPEG limit) and cost ~1.1 GB in every process that decoded it."""
    source, _, _ = astronaut_pair
    bomb = hostile_media.tiny_progressive_jpeg(14000)
    assert len(bomb) < 300
    body = assert_problem(post_job(api_a, source, bomb), 400, "image_too_large", field="target")
    assert "196 MP" in body["detail"] and "progressive" in body["detail"], body["detail"]
    with pytest.raises(InvalidImage, match="too large"):
        decode_image(bomb, which="target")
    assert not Job.objects.exists() and not LedgerEntry.objects.filter(kind=EntryKind.HOLD).exists()


@pytest.mark.parametrize("make", [hostile_media.truncated_jpeg_with_a_stray_byte, hostile_media.truncated_mpo])
def test_a_truncated_jpeg_with_a_stray_byte_or_as_mpo_is_still_found_out(make):
    """A stray byte between segments made the minimum-data check give up, and an MPO was never
    checked: 36 MP accepted in 1.5 kB, a full decode (~345 MB) in every later step."""
    with pytest.raises(UploadRejected) as refused:
        inspect_image(make(), field="target", media_type="image/jpeg")
    assert refused.value.code == "corrupt_image"


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (hostile_media.corrupt_heic, "corrupt_image"),
        (hostile_media.mp4_with_an_unknown_codec, "corrupt_video"),
        (hostile_media.mp4_with_frames_hours_apart, "corrupt_video"),
    ],
)
def test_damaged_files_that_were_500s_are_specific_4xx(api_a, astronaut_pair, settings, make, code):
    settings.VIDEO_ENABLED = True
    api_a.raise_request_exception = False
    source, _, _ = astronaut_pair
    assert_problem(post_job(api_a, source, make()), 400, code, field="target")
    assert not Job.objects.exists() and not LedgerEntry.objects.filter(kind=EntryKind.HOLD).exists()


@pytest.mark.parametrize("make", [lambda: hostile_media.mp4(15, 25), hostile_media.webm_with_a_latin1_title])
def test_ordinary_clips_that_were_500s_are_accepted(api_a, astronaut_pair, settings, make):
    """15 frames at 25 fps: the duration came out as the exact Fraction 3/5 (larger than the
    float timeline 0.6), which JSON cannot hold: a 500 after the job and its hold were saved (about
    half of all frame counts at 25-60 fps). A Latin-1 title tag failed PyAV's strict UTF-8 decode."""
    settings.VIDEO_ENABLED = True
    source, _, _ = astronaut_pair
    response = post_job(api_a, source, make())
    assert response.status_code == 201, response.content
    job = Job.objects.get(id=response.json()["id"])
    assert isinstance(job.target.duration_seconds, float)
    json.dumps(response.json())


def test_a_clip_whose_frames_grow_after_the_first_is_refused_when_read():
    """Checked, priced and screened at 320x240 by its first frame; its later frames were decoded at
    whatever size they carry (67 MP frames past the 40 MP limit; 2.7 GB and an out-of-memory at
    16000x16000). Now a change of size stops the read, and the decoder refuses an oversized frame
    before making it."""
    clip = io.BytesIO(hostile_media.webm_whose_frames_grow(640))
    assert (video_io.probe(clip).width, video_io.probe(clip).height) == (320, 240)
    with pytest.raises(video_io.InvalidVideo, match="frame size changes at frame 3"):
        list(video_io.read_frames(clip))
    with pytest.raises(video_io.InvalidVideo, match="could not be decoded at frame 3"):
        list(video_io.read_frames(clip, max_pixels=320 * 240))  # the decoder's own limit
    with pytest.raises(video_io.InvalidVideo):
        video_io.sample_frames(clip)  # what moderation screens


def test_a_codec_we_do_not_process_is_refused_without_decoding_it(monkeypatch, settings):
    """A 12000x12000 16-bit PNG frame in a .mov cost 9 s and 1.65 GB of the web process, then a 415."""
    settings.VIDEO_ENABLED = True
    monkeypatch.setattr(video_io, "_first_frame", lambda *a: pytest.fail("decoded a frame of a refused codec"))
    with pytest.raises(UploadRejected) as refused:
        inspect_upload(SimpleUploadedFile("clip.mov", hostile_media.mov_with_png_frames(64)), field="target", allow_video=True)
    assert refused.value.status == 415 and "png" in refused.value.message
