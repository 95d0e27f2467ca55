"""Uploads made the way an attacker or a broken tool makes them: real encodes with a few bytes changed."""

from __future__ import annotations

import io
from fractions import Fraction

import av
import numpy as np
from PIL import Image


def tiny_progressive_jpeg(side: int = 14000) -> bytes:
    """A progressive 4:4:4 JPEG whose frame header says side×side, cut after its first scan header:
    a few hundred bytes that libjpeg buffers whole as coefficients (~1.1 GB at 14000²)."""
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (128, 128, 128)).save(buffer, "JPEG", progressive=True, subsampling=0, quality=50)
    data = bytearray(buffer.getvalue())
    sof = data.index(b"\xff\xc2")
    data[sof + 5 : sof + 9] = side.to_bytes(2, "big") + side.to_bytes(2, "big")  # height, width
    sos = data.index(b"\xff\xda")
    return bytes(data[: sos + 2 + int.from_bytes(data[sos + 2 : sos + 4], "big")]) + b"\xff\xd9"


def truncated_jpeg_with_a_stray_byte(side: int = 6000) -> bytes:
    """A baseline JPEG of side×side cut to 64 bytes of scan data, with one stray byte after APP0
    (libjpeg and Pillow skip it)."""
    buffer = io.BytesIO()
    Image.new("RGB", (side, side), (120, 130, 140)).save(buffer, "JPEG", quality=90)
    full = buffer.getvalue()
    sos = full.index(b"\xff\xda")
    cut = full[: sos + 2 + int.from_bytes(full[sos + 2 : sos + 4], "big") + 64] + b"\xff\xd9"
    app0_end = 4 + int.from_bytes(full[4:6], "big")
    return cut[:app0_end] + b"\x00" + cut[app0_end:]


def corrupt_heic() -> bytes:
    """A HEIC whose first HEVC NAL length prefix is too long (one byte changed): pillow-heif raises EOFError."""
    buffer = io.BytesIO()
    pixels = np.random.default_rng(0).integers(0, 255, (96, 128, 3)).astype(np.uint8)
    Image.fromarray(pixels).save(buffer, "HEIF")
    data = bytearray(buffer.getvalue())
    data[data.index(b"mdat") + 5] = 0x48
    return bytes(data)


def _encode(container, codec: str, count: int, rate=25, size=(128, 96)) -> None:
    stream = container.add_stream(codec, rate=rate)
    stream.width, stream.height, stream.pix_fmt = *size, "yuv420p"
    for i in range(count):
        frame = av.VideoFrame.from_ndarray(np.full((size[1], size[0], 3), (100 + i) % 256, np.uint8), format="rgb24")
        frame.pts = i
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode(None):
        container.mux(packet)


def mp4(frames: int, rate: int = 25) -> bytes:
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp4") as container:
        _encode(container, "libx264", frames, rate)
    return buffer.getvalue()


def mp4_with_an_unknown_codec() -> bytes:
    """An H.264 MP4 whose sample entry names a codec FFmpeg does not know (no codec context)."""
    data = bytearray(mp4(10))
    at = data.index(b"avc1", data.index(b"stsd"))
    data[at : at + 4] = b"zzzz"
    return bytes(data)


def webm_with_a_latin1_title() -> bytes:
    """A VP8 WebM whose Title tag holds Latin-1 bytes ("été"), as older tools write them."""
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="webm") as container:
        container.metadata["title"] = "XXXXXX"
        _encode(container, "libvpx", 10)
    return buffer.getvalue().replace(b"XXXXXX", b"\xe9t\xe9 XX")


def mp4_with_frames_hours_apart() -> bytes:
    """Two frames 10,000 s apart: FFmpeg's average rate is 1/5000 frame a second."""
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=Fraction(1, 5000))
        stream.width, stream.height, stream.pix_fmt = 128, 96, "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1)
        for i, pts in enumerate((0, 10000)):
            frame = av.VideoFrame.from_ndarray(np.full((96, 128, 3), 100 + i, np.uint8), format="rgb24")
            frame.pts, frame.time_base = pts, Fraction(1, 1)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return buffer.getvalue()


def jpeg_with_html(html: bytes) -> bytes:
    """A valid JPEG carrying `html` in a comment segment (HTML when served as text/html)."""
    buffer = io.BytesIO()
    Image.new("RGB", (128, 128), (10, 200, 30)).save(buffer, "JPEG")
    data = buffer.getvalue()
    return data[:2] + b"\xff\xfe" + (len(html) + 2).to_bytes(2, "big") + html + data[2:]


def webm_whose_frames_grow(big: int) -> bytes:
    """A VP8 WebM whose first 3 frames are 320x240 and whose next 2 (keyframes) are big x big: VP8
    frames carry their own size and the decoder follows it; the container says 320x240."""

    def encode(width: int, height: int, count: int) -> list:
        codec = av.CodecContext.create("libvpx", "w")
        codec.width, codec.height, codec.pix_fmt = width, height, "yuv420p"
        codec.time_base, codec.framerate = Fraction(1, 25), 25
        codec.options = {"deadline": "realtime", "cpu-used": "8"}
        packets = []
        for i in range(count):
            frame = av.VideoFrame(width, height, "yuv420p")
            for plane in frame.planes:
                plane.update(bytes([128]) * plane.buffer_size)
            frame.pts = i
            packets += codec.encode(frame)
        return packets + codec.encode(None)

    buffer = io.BytesIO()
    with av.open(buffer, "w", format="webm") as container:
        stream = container.add_stream("libvpx", rate=25)
        stream.width, stream.height, stream.pix_fmt = 320, 240, "yuv420p"
        stream.time_base = Fraction(1, 25)
        for i, packet in enumerate(encode(320, 240, 3) + encode(big, big, 2)):
            packet.stream, packet.pts, packet.dts, packet.time_base, packet.duration = stream, i, i, Fraction(1, 25), 1
            container.mux(packet)
    return buffer.getvalue()


def mov_with_png_frames(side: int) -> bytes:
    """A QuickTime file whose one frame is a side x side PNG (a codec we do not process)."""
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mov") as container:
        stream = container.add_stream("png", rate=25)
        stream.width, stream.height, stream.pix_fmt = side, side, "rgb24"
        frame = av.VideoFrame(side, side, "rgb24")
        frame.planes[0].update(bytes(frame.planes[0].buffer_size))
        frame.pts = 0
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            container.mux(packet)
    return buffer.getvalue()


def truncated_mpo(side: int = 6000) -> bytes:
    """A two-picture MPO (a phone's stereo/depth shot) whose first, side x side picture is cut to 64
    bytes of scan data: Pillow names it MPO, not JPEG, and the JPEG data check was skipped."""
    buffer = io.BytesIO()
    Image.new("RGB", (side, side), (120, 130, 140)).save(
        buffer, "MPO", save_all=True, append_images=[Image.new("RGB", (64, 64))], quality=90
    )
    mpo = buffer.getvalue()
    sos = mpo.index(b"\xff\xda")
    first_eoi = mpo.index(b"\xff\xd9")
    return mpo[: sos + 2 + int.from_bytes(mpo[sos + 2 : sos + 4], "big") + 64] + b"\xff\xd9" + mpo[first_eoi + 2 :]
