"""Video decode/encode with PyAV: probe by counting packets, BGR frames by index, H.264 parts, final mux.

Frames are BGR uint8 in *display* orientation: the container's rotation (display matrix, set by
phones) is applied on decode, and outputs carry no rotation. Parts are video-only H.264 files
encoded with identical settings and no B-frames, so their packets can be concatenated as they are
(pts == dts, every part starts with an IDR frame); the final mux adds the original audio once.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import BinaryIO

import av
import cv2
import numpy as np

from swap.errors import EngineError
from swap.image_io import DEFAULT_MAX_PIXELS

VIDEO_CODECS = {"h264", "hevc", "vp8", "vp9", "av1", "mpeg4"}
DEFAULT_PRESET = "veryfast"

Source = str | Path | BinaryIO


class InvalidVideo(EngineError):
    code = "corrupt_video"


class NoVideoStream(EngineError):
    code = "unsupported_media_type"


@dataclass(frozen=True)
class VideoInfo:
    width: int  # display size, after rotation
    height: int
    rotation: int  # counter-clockwise degrees to turn coded frames upright: 0, 90, 180, -90
    fps: Fraction
    frames: int  # the video packets the demuxer delivers (never the container's own figures)
    duration_seconds: float  # the packets' timeline: first pts to last pts + its duration
    has_audio: bool
    video_codec: str
    audio_codec: str | None


def _open(source: Source, max_pixels: int = DEFAULT_MAX_PIXELS) -> av.container.InputContainer:
    """The file opened for reading. Its decoders refuse a frame over `max_pixels` before making it,
    also while FFmpeg reads the streams' parameters at open: VP8/VP9 frames carry their own size
    (a clip whose first frame is 320x240 can hold 16000x16000 frames, ~400 MB each, past the checks
    an upload made on its first frame), and a 12000x12000 16-bit PNG frame in a .mov cost 864 MB
    to open. A tag in another encoding (a Latin-1 title) is not a reason to refuse the clip."""
    if not isinstance(source, (str, Path)):
        source.seek(0)
    try:
        return av.open(
            source if not isinstance(source, Path) else str(source),
            "r",
            metadata_errors="replace",
            options={"max_pixels": str(max_pixels)},
        )
    except av.FFmpegError as exc:
        raise InvalidVideo(f"The file could not be read as a video ({exc}).") from exc


def _limit_decoder(stream, max_pixels: int) -> None:
    """The stream's decoder (opened at its first frame) refuses frames over `max_pixels` too (the
    options given at open reach the parameter probe's decoders, not this one)."""
    stream.codec_context.options = {**stream.codec_context.options, "max_pixels": str(max_pixels)}


def _fps(stream) -> Fraction:
    rate = stream.average_rate or stream.guessed_rate or stream.base_rate
    if not rate or rate <= 0:
        raise InvalidVideo("The video has no usable frame rate.")
    # Containers store e.g. 2997/100 for NTSC rates; keep them exact but bounded. A rate under
    # 1/2002 frame a second bounds to 0.
    fps = Fraction(rate).limit_denominator(1001)
    if fps <= 0:
        raise InvalidVideo("The video has no usable frame rate.")
    return fps


def _packet_timeline(source: Source) -> tuple[int, float | None]:
    """(video packets, seconds from the first pts to the end of the last packet) by demuxing alone.

    Container figures (Matroska's Segment Duration, MP4's mvhd/tkhd, a stream's frame count) are
    written by whoever made the file and can be edited to anything: a clip that says 10 s but holds
    100 s would be priced, limited and screened as 10 s. Demuxing reads every packet header without
    decoding (a few ms for thousands of frames), so the count is what decoding would deliver.
    """
    with _open(source) as container:
        stream = container.streams.video[0]
        count, first_pts, end_pts = 0, None, None
        try:
            for packet in container.demux(stream):
                if packet.size == 0:  # the demuxer's flush packet at the end
                    continue
                count += 1
                if packet.pts is not None:
                    first_pts = packet.pts if first_pts is None else min(first_pts, packet.pts)
                    end = packet.pts + (packet.duration or 0)
                    end_pts = end if end_pts is None else max(end_pts, end)
        except av.FFmpegError as exc:
            raise InvalidVideo(f"The video could not be read to its end ({exc}).") from exc
        if first_pts is None or end_pts is None or not stream.time_base:
            return count, None
        return count, float((end_pts - first_pts) * stream.time_base)


def probe(source: Source, *, decode_first: bool = True, max_pixels: int = DEFAULT_MAX_PIXELS) -> VideoInfo:
    """What the file really holds: packets counted by demuxing (frames, timeline), codec and size;
    decodes at most one frame (to prove the stream decodes and read its rotation), and none of a
    codec we do not process (VIDEO_CODECS) or a size over `max_pixels`: those are refused by
    what the stream's header says, without running their decoder on the file."""
    frames, timeline_seconds = None, None
    with _open(source, max_pixels) as container:
        if not container.streams.video:
            raise NoVideoStream("The file has no video stream.")
        stream = container.streams.video[0]
        if stream.codec_context is None:  # a codec id FFmpeg does not know
            raise InvalidVideo("The video stream's format is not one we can read.")
        codec = stream.codec_context.codec.canonical_name  # the format (av1), not the decoder (libdav1d)
        fps = _fps(stream)
        audio = container.streams.audio[0] if container.streams.audio else None
        if audio is not None and audio.codec_context is None:
            raise InvalidVideo("The audio stream's format is not one we can read.")
        audio_codec = audio.codec_context.name if audio else None
        width, height, rotation = stream.codec_context.width, stream.codec_context.height, 0
        _limit_decoder(stream, max_pixels)
        if decode_first and codec in VIDEO_CODECS and width * height <= max_pixels:
            first = _first_frame(container, stream)
            width, height, rotation = first.width, first.height, _rotation(first)
    frames, timeline_seconds = _packet_timeline(source)
    if rotation in (90, -90):
        width, height = height, width
    if width <= 0 or height <= 0 or frames <= 0:
        raise InvalidVideo("The video has no frames.")
    # A timeline shorter than its frames at the stated rate (timestamps squeezed together) still
    # counts as frames / fps: the work, the price and the limits follow the frames.
    # (A float: frames / fps is an exact Fraction, which JSON cannot hold.)
    duration = float(max(timeline_seconds or 0.0, frames / fps))
    return VideoInfo(
        width=width,
        height=height,
        rotation=rotation,
        fps=fps,
        frames=frames,
        duration_seconds=duration,
        has_audio=audio is not None,
        video_codec=codec,
        audio_codec=audio_codec,
    )


def _first_frame(container, stream) -> av.VideoFrame:
    try:
        for frame in container.decode(stream):
            return frame
    except av.FFmpegError as exc:
        raise InvalidVideo(f"The video stream could not be decoded ({exc}).") from exc
    raise InvalidVideo("The video stream has no decodable frame.")


def _rotation(frame: av.VideoFrame) -> int:
    angle = int(round(frame.rotation or 0))
    return {270: -90, -270: 90, -180: 180}.get(angle, angle) if angle % 90 == 0 else 0


def _upright(image: np.ndarray, rotation: int) -> np.ndarray:
    if rotation == 90:
        return cv2.rotate(image, cv2.ROTATE_90_COUNTERCLOCKWISE)
    if rotation == -90:
        return cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)
    if rotation == 180:
        return cv2.rotate(image, cv2.ROTATE_180)
    return image


def even_size(width: int, height: int) -> tuple[int, int]:
    """yuv420p needs even sides: round down (never scale up past what was asked)."""
    return max(2, width - width % 2), max(2, height - height % 2)


# Colour spaces libswscale converts with BT.601's matrix, as OpenCV's I420 conversions do:
# unspecified, BT.470BG and SMPTE 170M (AVColorSpace 2, 5, 6), in limited range (not JPEG's: 2).
BT601_COLORSPACES = {2, 5, 6}
JPEG_RANGE = 2


def _bt601_yuv420p(frame: av.VideoFrame) -> bool:
    return (
        frame.format.name == "yuv420p"
        and frame.colorspace in BT601_COLORSPACES
        and frame.color_range != JPEG_RANGE
    )


def _to_bgr(frame: av.VideoFrame, rotation: int, size: tuple[int, int] | None) -> np.ndarray:
    if size is not None:
        width, height = size
        if rotation in (90, -90):
            width, height = height, width  # scale in coded orientation, then turn upright
        if (width, height) != (frame.width, frame.height):
            frame = frame.reformat(width=width, height=height, format="bgr24", interpolation="AREA")
    if _bt601_yuv420p(frame):
        # OpenCV's I420 -> BGR takes half libswscale's time (~3.5 vs 7 ms a 720p frame); values
        # differ by a rounding step (mean 1 level, at most 3, chroma upsampled by repetition).
        return _upright(cv2.cvtColor(frame.to_ndarray(), cv2.COLOR_YUV2BGR_I420), rotation)
    return _upright(frame.to_ndarray(format="bgr24"), rotation)


def read_frames(
    source: Source,
    *,
    start: int = 0,
    stop: int | None = None,
    size: tuple[int, int] | None = None,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> Iterator[np.ndarray]:
    """BGR frames [start, stop) by index, upright, scaled to `size` (display width, height), as
    `decoded_frames` decodes them."""
    for _, frame, rotation in decoded_frames(source, start=start, stop=stop, max_pixels=max_pixels):
        yield _to_bgr(frame, rotation, size)


def decoded_frames(
    source: Source, *, start: int = 0, stop: int | None = None, max_pixels: int = DEFAULT_MAX_PIXELS
) -> Iterator[tuple[int, av.VideoFrame, int]]:
    """(index, decoded frame, display rotation) of the frames [start, stop), not yet converted to
    BGR (`_to_bgr`): a caller that keeps a few of them converts only those.

    A later segment seeks to the keyframe before frame `start` and numbers each frame by its rank
    among the stream's presentation times (read by demuxing: no frame rate assumed, so a clip whose
    rate varies, a phone dropping from 30 to 15 frames/s in low light, is cut where segment 0 counts
    too); frames before `start` are decoded and dropped, so each cut is exact. Every frame has the
    first one's size (what the upload was checked, priced and screened at): one that changes it is
    InvalidVideo.
    """
    with _open(source, max_pixels) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        _limit_decoder(stream, max_pixels)
        _fps(stream)  # refused here too: a clip without a usable frame rate cannot be timed
        times = None
        if start > 0:  # every frame's presentation time, by demuxing alone; then back to the start
            times = sorted(p.pts for p in container.demux(stream) if p.size and p.pts is not None)
            container.seek(0, stream=stream, backward=True)
        frames = container.decode(stream)
        try:
            first = next(frames)
        except StopIteration:
            return
        except av.FFmpegError as exc:
            raise InvalidVideo(f"The video stream could not be decoded ({exc}).") from exc
        rotation = _rotation(first)
        index, pending = 0, first
        if times is not None and first.pts is not None:
            if start >= len(times):
                return
            container.seek(times[start], stream=stream, backward=True)
            frames = container.decode(stream)
            pending = next(frames, None)
            if pending is None or pending.pts is None:
                return
            index = bisect.bisect_left(times, pending.pts)
            if index > start:  # the seek overshot (broken index): decode from the start instead
                container.seek(0, stream=stream, backward=True)
                frames, index = container.decode(stream), 0
                pending = next(frames, None)
        try:
            while pending is not None:
                if stop is not None and index >= stop:
                    return
                if (pending.width, pending.height) != (first.width, first.height):
                    raise InvalidVideo(
                        f"The video's frame size changes at frame {index} ({first.width}x{first.height} "
                        f"to {pending.width}x{pending.height}); export it again at one size."
                    )
                if index >= start:
                    yield index, pending, rotation
                index += 1
                pending = next(frames, None)
        except av.FFmpegError as exc:
            raise InvalidVideo(f"The video stream could not be decoded at frame {index} ({exc}).") from exc


def sample_indices(frames: int, duration_seconds: float, *, per_second: float = 1.0, minimum: int = 8) -> list[int]:
    """The frame indices `sample_frames` picks: about `per_second` a second (at least `minimum`), spread evenly."""
    count = min(frames, max(minimum, math.ceil(duration_seconds * per_second)))
    return sorted({min(frames - 1, int((i + 0.5) * frames / count)) for i in range(count)})


def sample_size(width: int, height: int, max_side: int | None) -> tuple[int, int] | None:
    """The (even) size of a sampled frame: the longer side at most `max_side`; None: as it is."""
    if not max_side or max(width, height) <= max_side:
        return None
    scale = max_side / max(width, height)
    return even_size(round(width * scale), round(height * scale))


def sample_frames(
    source: Source, *, per_second: float = 1.0, minimum: int = 8, max_side: int | None = 720
) -> list[tuple[int, np.ndarray]]:
    """About `per_second` frames a second (at least `minimum`, spread evenly), as (index, BGR)."""
    picked = list(iter_sampled_frames(source, per_second=per_second, minimum=minimum, max_side=max_side))
    if not picked:
        raise InvalidVideo("No frame of the video could be decoded.")
    return picked


def iter_sampled_frames(
    source: Source, *, per_second: float = 1.0, minimum: int = 8, max_side: int | None = 720
) -> Iterator[tuple[int, np.ndarray]]:
    """`sample_frames`' frames one at a time, each decoded when asked for: a caller looking for the
    first sampled frame with a face decodes the clip up to that frame, not all of it (a 30 s 720p
    clip: ~0.5 s). Nothing when no frame decodes."""
    info = probe(source)
    wanted = sample_indices(info.frames, info.duration_seconds, per_second=per_second, minimum=minimum)
    size = sample_size(info.width, info.height, max_side)
    picked = 0
    # One sequential pass (an inter frame needs the frames before it decoded), converting only the
    # frames kept: converting every frame of a 30 s 720p clip was ~1.5 s of the ~2.2 s.
    for index, frame, rotation in decoded_frames(source):
        if picked and picked == len(wanted):
            return
        if index == wanted[picked]:
            picked += 1
            yield index, _to_bgr(frame, rotation, size)


class PartWriter:
    """A video-only H.264 part: libx264, yuv420p, no B-frames, CRF; pts = frame index."""

    def __init__(
        self,
        path: str | Path,
        *,
        width: int,
        height: int,
        fps: Fraction,
        crf: int,
        preset: str = DEFAULT_PRESET,
        threads: int = 1,
    ) -> None:
        if width % 2 or height % 2:
            raise ValueError("yuv420p needs even dimensions")
        self.container = av.open(str(path), "w", format="mp4")
        self.stream = self.container.add_stream("libx264", rate=fps)
        self.stream.width, self.stream.height, self.stream.pix_fmt = width, height, "yuv420p"
        # Identical options in every part keep SPS/PPS identical, so parts concatenate by packet.
        self.stream.options = {
            "crf": str(crf),
            "preset": preset,
            "bf": "0",
            "g": str(max(1, round(2 * fps))),
            # One encoder thread: at veryfast a 720p frame is ~5 ms of one core, under the engine's
            # time per frame, and x264's frame threads cost ~1 ms of CPU a frame more (bench/video.py)
            # on a machine whose other core decodes, tracks and swaps. Segments give parallelism.
            "threads": str(threads),
            # Say what write() encodes (BT.601's matrix, limited range): players take an untagged HD
            # stream as BT.709 (H.273), and showed every 720p+ result with shifted colours.
            "colormatrix": "smpte170m",
            "range": "tv",
        }
        self.stream.codec_context.colorspace = 6  # AVCOL_SPC_SMPTE170M
        self.stream.codec_context.color_range = 1  # AVCOL_RANGE_MPEG
        self.frames = 0

    def write(self, bgr: np.ndarray) -> None:
        # OpenCV's BGR -> I420 (BT.601, limited range, as libswscale's default) in ~2/3 of
        # libswscale's time; it averages each 2x2 block's chroma where swscale's default picks,
        # so the encoded colours are a little closer to the frame (PSNR +2 dB on bench/video.py).
        yuv = cv2.cvtColor(np.ascontiguousarray(bgr), cv2.COLOR_BGR2YUV_I420)
        frame = av.VideoFrame.from_ndarray(yuv, format="yuv420p")
        frame.pts = self.frames
        self.container.mux(self.stream.encode(frame))
        self.frames += 1

    def close(self) -> None:
        self.container.mux(self.stream.encode(None))
        self.container.close()

    def __enter__(self) -> PartWriter:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None:
            self.close()
        else:
            self.container.close()


def _video_packets(
    parts: list[Path], out_stream, fps: Fraction, times: list[int] | None = None
) -> Iterator[tuple[float, av.Packet]]:
    """Every part's packets on one timeline: frame i (its index in the part + the frames before the
    part) at `times[i]`, ticks of out_stream.time_base (the original's presentation times), or at
    i / fps without them."""
    offset = 0
    extradata = None
    tick = out_stream.time_base
    per_frame = max(1, round(1 / (fps * tick)))
    previous = None
    for part in parts:
        with av.open(str(part)) as container:
            stream = container.streams.video[0]
            if extradata is None:
                extradata = stream.codec_context.extradata
            elif stream.codec_context.extradata != extradata:
                raise InvalidVideo(f"Segment {part.name} was encoded with different settings; cannot join.")
            count = 0
            for packet in container.demux(stream):
                if packet.size == 0 or packet.pts is None:
                    continue
                index = round(packet.pts * packet.time_base * fps) + offset
                if times is not None and index < len(times):
                    pts = times[index]
                else:  # no timeline, or past its end (a frame the demuxer did not count)
                    pts = index * per_frame if previous is None else previous + per_frame
                pts = pts if previous is None else max(previous + 1, pts)  # parts have no B-frames
                packet.pts = packet.dts = pts
                packet.duration = per_frame
                packet.time_base = tick
                packet.stream = out_stream
                previous = pts
                count += 1
                yield float(pts * tick), packet
            offset += count


def _frame_times(source: Source, tick: Fraction) -> list[int]:
    """Each frame's presentation time in the original, in order, as ticks (never before 0): a
    variable frame rate, a header rate that is not the frames' own, and a picture that starts after
    its sound are all kept."""
    with _open(source) as container:
        stream = container.streams.video[0]
        times = sorted(p.pts for p in container.demux(stream) if p.size and p.pts is not None)
        return [max(0, round(pts * stream.time_base / tick)) for pts in times]


def _audio_packets(source: Source, out_container) -> Iterator[tuple[float, av.Packet]]:
    """The original audio: AAC packets copied as they are, anything else re-encoded to AAC.

    The output stream is added on the first next(); join_parts primes the generator before muxing.
    """
    container = _open(source)
    try:
        in_stream = container.streams.audio[0]
        if in_stream.codec_context.name == "aac":
            out_stream = out_container.add_stream_from_template(in_stream)
            for packet in container.demux(in_stream):
                if packet.size == 0 or packet.pts is None:
                    continue
                packet.stream = out_stream
                yield float(packet.pts * packet.time_base), packet
            return
        rate = in_stream.codec_context.sample_rate or 48000
        out_stream = out_container.add_stream("aac", rate=rate)
        out_stream.layout = "stereo" if (in_stream.codec_context.channels or 2) > 1 else "mono"
        out_stream.bit_rate = 160_000
        # Samples numbered contiguously from the first frame's time (a late start is kept): a frame
        # without pts made the encoder's packets come without pts too, and the join failed on every
        # clip whose sound is not AAC (WebM/Opus from browsers, MOV/PCM from cameras).
        next_pts = None
        for frame in container.decode(in_stream):
            if next_pts is None:
                next_pts = max(0, round(float(frame.time or 0) * rate))
            frame.pts, frame.time_base = next_pts, Fraction(1, rate)
            next_pts += frame.samples
            for packet in out_stream.encode(frame):
                yield float(packet.pts * packet.time_base), packet
        for packet in out_stream.encode(None):
            yield float(packet.pts * packet.time_base), packet
    finally:
        container.close()


# The joined result's video time base: fine enough for any frame time of the original.
TIMELINE_TICK = Fraction(1, 90_000)

# Tags the MP4 muxer writes as iTunes-style items; any other key needs `use_metadata_tags`.
MP4_STANDARD_TAGS = {"title", "comment", "description", "artist", "album", "date", "genre", "copyright"}


def join_parts(
    parts: list[Path],
    output: str | Path,
    *,
    fps: Fraction,
    original: Source | None,
    metadata: dict[str, str] | None = None,
) -> int:
    """Concatenate parts' video packets and mux the original audio once; MP4 with faststart.

    `original`: the clip the parts were made from; its sound is muxed as it is and each frame is
    shown at its time there (the parts are numbered by frame, at `fps`). None: no sound, frames at `fps`.

    `metadata` goes into the container (e.g. an AI-generated label); keys MP4 has no standard tag for
    (GB 45438's `AIGC`) are written as `mdta` metadata items. Returns the frames written.
    """
    if not parts:
        raise ValueError("nothing to join")
    fps = Fraction(fps)
    flags = "+faststart" + ("+use_metadata_tags" if set(metadata or {}) - MP4_STANDARD_TAGS else "")
    with av.open(str(output), "w", format="mp4", options={"movflags": flags}) as out:
        out.metadata.update(metadata or {})
        with av.open(str(parts[0])) as first:
            video_stream = out.add_stream_from_template(first.streams.video[0])
        times, has_audio = None, False
        if original is not None:
            video_stream.time_base = TIMELINE_TICK
            times = _frame_times(original, TIMELINE_TICK)
            with _open(original) as probe_container:
                has_audio = bool(probe_container.streams.audio)
        else:
            video_stream.time_base = 1 / fps
        streams: list[Iterator[tuple[float, av.Packet]]] = [_video_packets(parts, video_stream, fps, times)]
        if has_audio:
            # Run the generator to its first yield so the audio stream exists before muxing starts.
            streams.append(_primed(_audio_packets(original, out)))
        frames = 0
        # Interleave by time: players reading the file progressively need audio near its video.
        for _, packet in heapq.merge(*streams, key=lambda item: item[0]):
            if packet.stream is video_stream:
                frames += 1
            out.mux(packet)
    return frames


def _primed(generator: Iterator[tuple[float, av.Packet]]) -> Iterator[tuple[float, av.Packet]]:
    items = iter(generator)
    try:
        head = next(items)
    except StopIteration:
        return iter(())
    return _chain_one(head, items)


def _chain_one(head, rest):
    yield head
    yield from rest


def count_frames(source: Source) -> tuple[int, Fraction, float]:
    """(frame count, frame rate, duration seconds) from the packets, without decoding a frame."""
    info = probe(source, decode_first=False)
    return info.frames, info.fps, info.duration_seconds


def audio_duration(source: Source) -> float | None:
    """Seconds of audio (sum of decoded samples / rate), or None without an audio stream."""
    with _open(source) as container:
        if not container.streams.audio:
            return None
        stream = container.streams.audio[0]
        samples = sum(frame.samples for frame in container.decode(stream))
        return samples / stream.codec_context.sample_rate
