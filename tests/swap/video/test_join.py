"""Joining the swapped frames with the original's sound (swap.video.io.join_parts, PartWriter): sound
that is not AAC (every browser recording is WebM/Opus, cameras write MOV/PCM), a picture that starts
after its sound, and the colour matrix the parts are encoded with, said in the stream."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from swap.video import io

FPS = Fraction(12)
FRAMES = 24
SIZE = 128
VP9 = {"crf": "30", "b": "0", "deadline": "realtime", "cpu-used": "8"}


def grey_frames(count: int = FRAMES) -> list[np.ndarray]:
    """Frame i is grey level 40 + 7 i: which frame a decoded one is, by its mean."""
    return [np.full((SIZE, SIZE, 3), 40 + 7 * i, np.uint8) for i in range(count)]


def frame_number(bgr: np.ndarray) -> int:
    return round((float(bgr.mean()) - 40) / 7)


def original(path: Path, *, fmt: str, vcodec: str, acodec: str | None, options=None, video_offset_s: float = 0.0,
             audio_seconds: float = FRAMES / FPS, times: list[float] | None = None, rate: Fraction = FPS) -> Path:
    """A clip with a 440 Hz tone from 0 s and its picture from `video_offset_s`; frame i at
    `times[i]` (default i / FPS) in a stream whose header says `rate`."""
    times = times or [i / FPS for i in range(FRAMES)]
    time_base = Fraction(1, 1000)
    with av.open(str(path), "w", format=fmt) as out:
        video = out.add_stream(vcodec, rate=rate)
        video.width = video.height = SIZE
        video.pix_fmt, video.time_base = "yuv420p", time_base
        video.options = options or {"preset": "veryfast"}
        audio = out.add_stream(acodec, rate=48000) if acodec else None
        if audio is not None:
            audio.layout = "mono"
        for i, picture in enumerate(grey_frames(len(times))):
            frame = av.VideoFrame.from_ndarray(picture, format="bgr24")
            frame.pts, frame.time_base = round((float(times[i]) + video_offset_s) / time_base), time_base
            out.mux(video.encode(frame))
        out.mux(video.encode(None))
        if audio is None:
            return path
        total = round(48000 * float(audio_seconds))
        tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(total) / 48000)).astype(np.float32)
        size = audio.codec_context.frame_size or 1024
        for start in range(0, total, size):
            chunk = np.pad(tone[start : start + size], (0, max(0, start + size - total)))
            frame = av.AudioFrame.from_ndarray(chunk[None, :], format="flt", layout="mono")
            frame.sample_rate, frame.pts, frame.time_base = 48000, start, Fraction(1, 48000)
            out.mux(audio.encode(frame))
        out.mux(audio.encode(None))
    return path


def swapped(original_path: Path, tmp_path: Path, segments: int = 1) -> Path:
    """The original's frames through PartWriter (cut into `segments` read with read_frames), joined."""
    info = io.probe(original_path)
    cuts = [round(info.frames * k / segments) for k in range(segments + 1)]
    parts = []
    for k in range(segments):
        part = tmp_path / f"part-{k}.mp4"
        with io.PartWriter(part, width=SIZE, height=SIZE, fps=info.fps, crf=18) as writer:
            for picture in io.read_frames(original_path, start=cuts[k], stop=cuts[k + 1]):
                writer.write(picture)
        parts.append(part)
    result = tmp_path / "result.mp4"
    assert io.join_parts(parts, result, fps=info.fps, original=original_path) == info.frames
    return result


def shown(path: Path) -> list[tuple[int, float]]:
    """(which original frame, when it is shown) of every frame of a clip."""
    with av.open(str(path)) as container:
        return [(frame_number(f.to_ndarray(format="bgr24")), float(f.time)) for f in container.decode(video=0)]


def first_time(path: Path, kind: str) -> float:
    with av.open(str(path)) as container:
        return float(next(container.decode(getattr(container.streams, kind)[0])).time)


@pytest.mark.parametrize(
    ("name", "vcodec", "acodec", "options"),
    [("clip.webm", "libvpx-vp9", "libopus", VP9), ("clip.mov", "libx264", "pcm_s16le", None)],
    ids=["webm-opus", "mov-pcm"],
)
def test_sound_that_is_not_aac_is_re_encoded_and_kept_whole(tmp_path, name, vcodec, acodec, options):
    """Its packets came out of the AAC encoder without times and the join failed: every such clip
    ran its whole GPU step, then failed."""
    source = original(tmp_path / name, fmt=name.split(".")[1], vcodec=vcodec, acodec=acodec, options=options)
    result = swapped(source, tmp_path)
    with av.open(str(result)) as container:
        assert container.streams.audio[0].codec_context.name == "aac"
    assert io.audio_duration(result) == pytest.approx(io.audio_duration(source), abs=0.05)
    assert first_time(result, "audio") == pytest.approx(0.0, abs=0.03)


def test_a_picture_that_starts_after_its_sound_keeps_its_place(tmp_path):
    """A clip trimmed without re-encoding: the picture starts 0.5 s into the sound. The picture was
    renumbered from 0 and the sound kept its times, so the whole result was 0.5 s out of sync."""
    source = original(tmp_path / "late.mp4", fmt="mp4", vcodec="libx264", acodec="aac", video_offset_s=0.5,
                      audio_seconds=FRAMES / FPS + Fraction(1, 2))
    before = first_time(source, "video") - first_time(source, "audio")
    assert before == pytest.approx(0.5, abs=0.03)
    result = swapped(source, tmp_path)
    after = first_time(result, "video") - first_time(result, "audio")
    assert after == pytest.approx(before, abs=float(1 / FPS) / 2 + 0.03)


def test_parts_say_which_colour_matrix_they_are_encoded_with(tmp_path):
    """PartWriter converts with BT.601's matrix (OpenCV); untagged, players take an HD stream as
    BT.709 and shift every colour of a 720p result by ~14 levels."""
    source = original(tmp_path / "clip.mp4", fmt="mp4", vcodec="libx264", acodec="aac")
    with av.open(str(swapped(source, tmp_path))) as container:
        frame = next(container.decode(video=0))
    assert frame.colorspace == 6  # SMPTE 170M (BT.601)
    assert frame.color_range == 1  # limited (MPEG)


VFR_TIMES = [i / 30 for i in range(15)] + [0.5 + i / 15 for i in range(15)]  # 30 frames/s, then 15
GOP_6 = {"crf": "1", "preset": "veryfast", "g": "6", "keyint_min": "6", "sc_threshold": "0", "bf": "0"}


def test_a_variable_frame_rate_clip_in_segments_keeps_every_frame_at_its_time(tmp_path):
    """A phone dropping from 30 to 15 frames/s: a later segment numbered frames by time at a
    constant rate (frames at the cut were lost or repeated) and the join re-timed every frame at
    one rate (the picture drifted from the sound)."""
    source = original(tmp_path / "vfr.mp4", fmt="mp4", vcodec="libx264", acodec="aac", options=GOP_6,
                      times=VFR_TIMES, rate=Fraction(30), audio_seconds=Fraction(3, 2))
    frames = shown(swapped(source, tmp_path, segments=2))
    assert [number for number, _ in frames] == list(range(len(VFR_TIMES)))
    assert max(abs(time - VFR_TIMES[number]) for number, time in frames) < 0.01


def test_a_header_rate_that_is_not_the_frames_own_keeps_the_clips_length(tmp_path):
    """A WebM whose header says 30 frames/s while its frames are 1/15 s apart came back at double speed."""
    times = [i / 15 for i in range(30)]
    source = original(tmp_path / "clip.webm", fmt="webm", vcodec="libvpx-vp9", acodec=None, options=VP9,
                      times=times, rate=Fraction(30))
    result = swapped(source, tmp_path)
    assert io.probe(result).duration_seconds == pytest.approx(2.0, abs=0.07)
    assert [time for _, time in shown(result)] == pytest.approx(times, abs=0.01)
