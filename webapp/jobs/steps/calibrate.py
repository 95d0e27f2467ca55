"""The GPU worker's measurement of its own speed at warm-up: one real swap per mode and pixel
class (photos), and a short clip per mode (videos), recorded as billing calibration samples, so a
fresh install quotes near what jobs will cost from its very first job (issue 14).

Also reports what each mode really runs as on this install (e.g. "hq" without a face enhancer is
"standard" work), so quotes and charges price the work that runs.

The face is NASA's public-domain astronaut portrait (as in scikit-image's `data.astronaut`).
"""

from __future__ import annotations

import logging
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np

from billing import services as billing_services
from billing.choices import MediaKind, Mode, SampleOrigin
from swap.video import io as video_io
from swap.video.process import process_clip
from swap.video.synthetic import ClipSpec, write_clip

from .common import swap_options_for

logger = logging.getLogger(__name__)

FACE_PATH = Path(__file__).with_name("calibration_face.jpg")
# One size per billing pixel class (billing.pricing.pixel_class).
IMAGE_SIZES = {"sd": (1280, 720), "hd": (1920, 1080), "uhd": (3840, 2160)}
VIDEO_SIZES = {"sd": (640, 360), "hd": (1920, 1080)}
VIDEO_SECONDS = 1.0
VIDEO_FPS = 12


def _job_like(mode: str) -> SimpleNamespace:
    return SimpleNamespace(
        mode=mode, faces="one", face_index=None, reference_face_index=None, face_sources=[]
    )


def mode_ran(mode: str, result) -> str:
    """What the engine says it ran, else: hq that enhanced nothing is standard work."""
    reported = getattr(result, "mode", None) or getattr(result, "mode_ran", None)
    if isinstance(reported, str) and reported in Mode.values:
        return reported
    if mode == Mode.HQ and not getattr(result, "enhancer", None):
        return Mode.STANDARD
    return mode


def _target(face_bgr: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A frame of the class size with the face at a realistic share of the picture."""
    width, height = size
    frame = np.full((height, width, 3), 118, np.uint8)
    side = min(height, width) // 2
    face = cv2.resize(cv2.flip(face_bgr, 1), (side, side), interpolation=cv2.INTER_AREA)
    y, x = (height - side) // 2, (width - side) // 2
    frame[y : y + side, x : x + side] = face
    return frame


def measure(pipeline, *, videos: bool = True) -> dict[str, str]:
    """Run the measurements, record them, and return {requested mode: mode that ran}."""
    face_bgr = cv2.imread(str(FACE_PATH))
    if face_bgr is None:
        logger.warning("calibration face %s missing: quotes use the seed calibration", FACE_PATH)
        return {}
    started = time.perf_counter()
    runs_as: dict[str, str] = {}
    notes: dict[str, str] = {}
    for mode in Mode.values:
        options = swap_options_for(_job_like(mode))
        for size in IMAGE_SIZES.values():
            result = pipeline.swap_image([face_bgr], _target(face_bgr, size), options)
            ran = mode_ran(mode, result)
            runs_as[mode] = ran
            if result.enhancer_skipped_reason:
                notes[mode] = result.enhancer_skipped_reason
            seconds = Decimal(str(round(result.inference_ms / 1000, 6)))
            if seconds > 0:
                billing_services.gpu_sample_record(
                    mode=ran,
                    kind=MediaKind.IMAGE,
                    width=size[0],
                    height=size[1],
                    gpu_seconds_per_frame=seconds,
                    origin=SampleOrigin.WARMUP,
                )
        if videos:
            _measure_video(pipeline, face_bgr, mode, options, runs_as)
    billing_services.mode_runs_record(runs_as=runs_as, notes=notes)
    logger.info("worker speed measured in %.1f s; modes run as %s", time.perf_counter() - started, runs_as)
    return runs_as


def _measure_video(pipeline, face_bgr: np.ndarray, mode: str, options, runs_as: dict[str, str]) -> None:
    source = pipeline.prepare_source([face_bgr])
    face_rgb = cv2.cvtColor(face_bgr, cv2.COLOR_BGR2RGB)
    with tempfile.TemporaryDirectory(prefix="visage-calibrate-") as tmp:
        for name, (width, height) in VIDEO_SIZES.items():
            clip = Path(tmp) / f"{name}.mp4"
            write_clip(
                clip,
                ClipSpec(width=width, height=height, fps=VIDEO_FPS, seconds=VIDEO_SECONDS, audio=False),
                face_rgb,
            )
            info = video_io.probe(clip)
            size = video_io.even_size(info.width, info.height)
            result = process_clip(
                pipeline, source, clip, Path(tmp) / f"{name}-out.mp4", size=size, options=options
            )
            if result.frames < 1:
                continue
            seconds = Decimal(
                str(round((result.inference_ms + source.inference_ms) / 1000 / result.frames, 6))
            )
            if seconds > 0:
                billing_services.gpu_sample_record(
                    mode=runs_as.get(mode, mode),
                    kind=MediaKind.VIDEO,
                    width=size[0],
                    height=size[1],
                    gpu_seconds_per_frame=seconds,
                    origin=SampleOrigin.WARMUP,
                )
