"""Videos are judged by their codec, not by the decoder PyAV picked (an AV1 MP4 was refused as
"uses the libdav1d codec"). Real clips encoded here with PyAV's encoders: SVT-AV1 for AV1, x265 for HEVC,
libvpx for VP9; a codec we don't process (MPEG-2) gets a clear 415."""

from __future__ import annotations

import io

import av
import numpy as np
import pytest

from webapp.media.validation import UploadRejected, inspect_video

W, H, FRAMES = 128, 96, 12


def encoded_clip(encoder: str, container: str) -> bytes:
    try:
        av.codec.Codec(encoder, "w")
    except av.codec.codec.UnknownCodecError:
        pytest.skip(f"this PyAV build has no {encoder} encoder")
    buffer = io.BytesIO()
    with av.open(buffer, "w", format=container) as out:
        stream = out.add_stream(encoder, rate=12)
        stream.width, stream.height, stream.pix_fmt = W, H, "yuv420p"
        for i in range(FRAMES):
            frame = np.zeros((H, W, 3), np.uint8)
            frame[:, : (i + 1) * 10] = (200, 120, 40)
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("encoder", "container", "media_type", "codec"),
    [
        ("libsvtav1", "mp4", "video/mp4", "av1"),
        ("libx265", "mp4", "video/mp4", "hevc"),
        ("libvpx-vp9", "webm", "video/webm", "vp9"),
        ("libx264", "mov", "video/quicktime", "h264"),
    ],
)
def test_supported_codecs_are_accepted_whatever_decodes_them(settings, encoder, container, media_type, codec):
    settings.MIN_IMAGE_SIDE = 64
    info = inspect_video(encoded_clip(encoder, container), field="target", media_type=media_type)
    assert (info.width, info.height, info.frames) == (W, H, FRAMES)
    from swap.video import io as video_io

    assert video_io.probe(io.BytesIO(encoded_clip(encoder, container))).video_codec == codec


def test_an_unsupported_codec_gets_a_clear_415():
    with pytest.raises(UploadRejected) as refused:
        inspect_video(encoded_clip("mpeg2video", "mp4"), field="target", media_type="video/mp4")
    assert refused.value.status == 415 and refused.value.code == "unsupported_media_type"
    assert "encoded as mpeg2video" in refused.value.message and "AV1" in refused.value.message
