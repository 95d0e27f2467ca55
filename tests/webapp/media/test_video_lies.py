"""A video whose container lies about its length is judged by what it holds (#30, item 1).

A Matroska/WebM Segment Duration or an MP4's mvhd/tkhd/mdhd durations are bytes anyone can edit: a
10 s clip that says 1 s was priced, limited and screened as 1 s (frames = duration × fps), so the
limits did not hold and screening sampled only the first tenth. The clips here are real encodes
with those fields edited in place, as an attacker would.
"""

from __future__ import annotations

import io
import struct

import av
import numpy as np
import pytest

from swap.video import io as video_io
from webapp.media.validation import UploadRejected, inspect_video

W, H, FPS, FRAMES = 64, 64, 30, 300  # 10 s


def clip(container: str) -> bytes:
    buffer = io.BytesIO()
    with av.open(buffer, "w", format=container) as out:
        stream = out.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = W, H, "yuv420p"
        for i in range(FRAMES):
            frame = np.full((H, W, 3), (i * 7) % 256, np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="bgr24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return buffer.getvalue()


def mkv_claiming(seconds: float) -> bytes:
    """The clip with its Segment Info Duration (EBML id 0x4489, float, in ms) rewritten."""
    data = bytearray(clip("matroska"))
    at = data.index(b"\x44\x89")
    size = data[at + 2] & 0x7F
    assert size in (4, 8)
    data[at + 3 : at + 3 + size] = struct.pack(">d" if size == 8 else ">f", seconds * 1000)
    return bytes(data)


def mp4_claiming(fraction: float) -> bytes:
    """The clip with mvhd, tkhd and mdhd durations (version 0 boxes) cut to `fraction`."""
    data = bytearray(clip("mp4"))
    # Offsets of the 32-bit duration from the box type: mvhd/mdhd after version+flags, two
    # times and the timescale; tkhd after version+flags, two times, track id and a reserved word.
    for box, offset in ((b"mvhd", 16), (b"tkhd", 20), (b"mdhd", 16)):
        at = data.index(box) + 4
        assert data[at] == 0, "version 0 box expected"
        (duration,) = struct.unpack(">I", data[at + offset : at + offset + 4])
        data[at + offset : at + offset + 4] = struct.pack(">I", int(duration * fraction))
    return bytes(data)


@pytest.mark.parametrize(
    ("data", "media_type"),
    [(mkv_claiming(1.0), "video/x-matroska"), (mp4_claiming(0.1), "video/mp4")],
    ids=["mkv-segment-duration", "mp4-mvhd-tkhd-mdhd"],
)
def test_frames_and_duration_come_from_the_packets_not_the_container(settings, data, media_type):
    settings.MIN_IMAGE_SIDE = 32
    info = inspect_video(data, field="target", media_type=media_type)
    assert info.frames == FRAMES
    assert info.duration_seconds == pytest.approx(FRAMES / FPS, abs=1 / FPS)


def test_a_clip_that_claims_to_be_short_is_refused_at_its_real_length(settings):
    settings.MIN_IMAGE_SIDE = 32
    settings.VIDEO_MAX_DURATION_S = 5
    with pytest.raises(UploadRejected) as refused:
        inspect_video(mkv_claiming(1.0), field="target", media_type="video/x-matroska")
    assert refused.value.code == "video_too_long"
    assert "10.0 s" in refused.value.message


def test_the_frame_limit_counts_real_frames(settings):
    settings.MIN_IMAGE_SIDE = 32
    settings.VIDEO_MAX_FRAMES = 100
    with pytest.raises(UploadRejected) as refused:
        inspect_video(mkv_claiming(1.0), field="target", media_type="video/x-matroska")
    assert refused.value.code == "too_many_frames"
    assert f"{FRAMES} frames" in refused.value.message


def test_screening_samples_span_the_real_timeline():
    picked = [index for index, _ in video_io.sample_frames(io.BytesIO(mkv_claiming(1.0)), max_side=None)]
    assert picked[-1] >= FRAMES * 0.9, picked  # the last tenth of the clip is screened too
    assert len(picked) >= 10  # about one a second of the real 10 s
