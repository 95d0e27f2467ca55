"""Synthetic clips for tests and benchmarks: a face moving over a textured background.

The bottom rows carry the frame index as a bar of black/white blocks (`read_counter` reads it
back), so a test can prove that segmenting and joining neither repeats nor drops a frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import cv2
import numpy as np

COUNTER_BITS = 10
COUNTER_ROWS = 16


@dataclass(frozen=True)
class ClipSpec:
    width: int = 256
    height: int = 256
    fps: int = 15
    seconds: float = 2.0
    audio: bool = True
    rotation: int = 0  # display rotation stored in the container (counter-clockwise degrees)
    face_height: float = 0.6  # of the frame's shorter side
    face: bool = True

    @property
    def frames(self) -> int:
        return round(self.fps * self.seconds)


def background(width: int, height: int) -> np.ndarray:
    """A smooth, deterministic, face-free texture (gradients and soft stripes)."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    b = 110 + 60 * np.sin(x / 23.0)
    g = 100 + 50 * np.cos(y / 31.0)
    r = 90 + 40 * np.sin((x + y) / 47.0)
    return np.clip(np.dstack([b, g, r]), 0, 255).astype(np.uint8)


def face_box(spec: ClipSpec, index: int, face_size: tuple[int, int]) -> tuple[int, int, int, int]:
    """Where the face patch sits in frame `index` (x1, y1, x2, y2): left to right over the clip."""
    fw, fh = face_size
    usable = max(0, spec.width - fw)
    t = index / max(1, spec.frames - 1)
    x1 = int(round(usable * (0.15 + 0.7 * t)))
    y1 = max(0, (spec.height - COUNTER_ROWS - fh) // 2)
    return x1, y1, x1 + fw, y1 + fh


def face_patch(face_rgb: np.ndarray, spec: ClipSpec) -> np.ndarray:
    """The astronaut's head (the crop fits skimage's astronaut) scaled to the clip, BGR."""
    crop = face_rgb[0:300, 120:390] if face_rgb.shape[:2] == (512, 512) else face_rgb
    h = int(min(spec.width, spec.height) * spec.face_height)
    w = int(round(h * crop.shape[1] / crop.shape[0]))
    return cv2.cvtColor(cv2.resize(crop, (w, h), interpolation=cv2.INTER_AREA), cv2.COLOR_RGB2BGR)


def draw_counter(frame: np.ndarray, index: int) -> None:
    block = frame.shape[1] // COUNTER_BITS
    for bit in range(COUNTER_BITS):
        value = 255 if (index >> bit) & 1 else 0
        frame[-COUNTER_ROWS:, bit * block : (bit + 1) * block] = value


def read_counter(frame: np.ndarray) -> int:
    block = frame.shape[1] // COUNTER_BITS
    rows = frame[-COUNTER_ROWS + 3 : -3]
    index = 0
    for bit in range(COUNTER_BITS):
        cell = rows[:, bit * block + 3 : (bit + 1) * block - 3]
        if float(cell.mean()) > 127:
            index |= 1 << bit
    return index


def render_frame(spec: ClipSpec, index: int, patch: np.ndarray | None) -> np.ndarray:
    frame = background(spec.width, spec.height)
    if patch is not None:
        x1, y1, x2, y2 = face_box(spec, index, (patch.shape[1], patch.shape[0]))
        frame[y1:y2, x1:x2] = patch
    draw_counter(frame, index)
    return frame


def _coded(frame: np.ndarray, rotation: int) -> np.ndarray:
    """The stored picture whose display (turned `rotation` degrees counter-clockwise) is `frame`."""
    if rotation == 90:
        return cv2.rotate(frame, cv2.ROTATE_90_CLOCKWISE)
    if rotation == -90:
        return cv2.rotate(frame, cv2.ROTATE_90_COUNTERCLOCKWISE)
    if rotation == 180:
        return cv2.rotate(frame, cv2.ROTATE_180)
    return frame


def write_clip(path: str | Path, spec: ClipSpec, face_rgb: np.ndarray | None) -> list[np.ndarray]:
    """Write an H.264 MP4 (plus a 440 Hz AAC sine when spec.audio); returns the rendered frames.

    `face_rgb` is e.g. skimage.data.astronaut(); None (or spec.face False) draws no face.
    """
    patch = face_patch(face_rgb, spec) if face_rgb is not None and spec.face else None
    frames = [render_frame(spec, i, patch) for i in range(spec.frames)]
    coded_h, coded_w = _coded(frames[0], spec.rotation).shape[:2]
    with av.open(str(path), "w", format="mp4") as out:
        video = out.add_stream("libx264", rate=Fraction(spec.fps))
        # libx264 in yuv444p keeps odd sizes legal (yuv420p would need even ones).
        odd = coded_w % 2 or coded_h % 2
        video.width, video.height, video.pix_fmt = coded_w, coded_h, "yuv444p" if odd else "yuv420p"
        video.options = {"crf": "12", "preset": "veryfast"}
        if spec.rotation:
            video.set_display_rotation(spec.rotation)
        audio = None
        if spec.audio:
            audio = out.add_stream("aac", rate=48000)
            audio.layout = "mono"
        for i, frame in enumerate(frames):
            vf = av.VideoFrame.from_ndarray(_coded(frame, spec.rotation), format="bgr24")
            vf.pts = i
            out.mux(video.encode(vf))
        out.mux(video.encode(None))
        if audio is not None:
            rate, total = 48000, int(round(48000 * spec.frames / spec.fps))
            t = np.arange(total, dtype=np.float32) / rate
            samples = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
            for offset in range(0, total, 1024):
                chunk = samples[offset : offset + 1024][None, :]
                af = av.AudioFrame.from_ndarray(chunk, format="flt", layout="mono")
                af.sample_rate, af.pts = rate, offset
                out.mux(audio.encode(af))
            out.mux(audio.encode(None))
    return frames


def write_audio_only(path: str | Path, seconds: float = 1.0) -> None:
    """An M4A (MP4 container, AAC only): passes the MP4 magic-number sniff but has no video."""
    with av.open(str(path), "w", format="mp4") as out:
        audio = out.add_stream("aac", rate=48000)
        audio.layout = "mono"
        total = int(48000 * seconds)
        samples = (0.3 * np.sin(np.arange(total) * 2 * np.pi * 440 / 48000)).astype(np.float32)
        for offset in range(0, total, 1024):
            af = av.AudioFrame.from_ndarray(
                samples[offset : offset + 1024][None, :], format="flt", layout="mono"
            )
            af.sample_rate, af.pts = 48000, offset
            out.mux(audio.encode(af))
        out.mux(audio.encode(None))
