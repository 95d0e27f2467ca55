"""The GPU worker's measurement of its own speed, run while it has no job (between its first jobs):
real swaps per mode at several photo sizes, and clips of several sizes and lengths (videos),
recorded as billing calibration samples, so quotes come near what jobs cost within a minute of a
fresh install's start (until then they use the seed calibration, or an earlier start's samples;
a job is always charged its own measured GPU time, capped at its quote). The quote's
speed model (billing.calibration) is fitted to them: a fixed part per job, a part per frame and a
part per megapixel, so the samples must differ in size and (for videos) in length.

Also reports what each mode really runs as on this install (e.g. "hq" without a face enhancer is
"standard" work), so quotes and charges price the work that runs.

The face is NASA's public-domain astronaut portrait (as in scikit-image's `data.astronaut`).
"""

from __future__ import annotations

import logging
import socket
import statistics
import tempfile
import time
from collections.abc import Generator
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np

from billing import services as billing_services
from billing.choices import MediaKind, Mode, SampleOrigin
from swap.modes import mode_ran
from swap.video import io as video_io
from swap.video.process import process_clip
from swap.video.synthetic import ClipSpec, write_clip

from .common import swap_options_for

logger = logging.getLogger(__name__)

FACE_PATH = Path(__file__).with_name("calibration_face.jpg")
# Photo sizes from a small phone picture to 4K (one timed swap each, per mode).
IMAGE_SIZES = [(640, 480), (1280, 720), (1920, 1080), (3840, 2160)]
# Clips as (width, height, frames): two lengths at one size separate the per-job part (analysing
# the source photo) from the per-frame part; several sizes give the per-megapixel part.
VIDEO_CLIPS = [(320, 180, 6), (320, 180, 24), (640, 360, 12), (1280, 720, 6)]
VIDEO_FPS = 12
# Each size is timed this many times and the median recorded: on a busy machine one run can take
# twice as long as the next (measured: hq at 1280×720 0.80 s once, 0.40-0.49 s otherwise).
REPEATS = 3
# One GPU worker of a machine measures its speed at a time (visage_run starts two or more where the
# engine runs on the CPU): the key names it, and outlives a worker killed half-way by this long.
MEASURER_KEY = "visage:speed-measurer:{host}"
MEASURER_TTL_S = 900


def _job_like(mode: str) -> SimpleNamespace:
    return SimpleNamespace(
        mode=mode, faces="one", face_index=None, reference_face_index=None, face_sources=[]
    )


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
    """Run every measurement at once, record them, and return {requested mode: mode that ran}."""
    steps = measurement_steps(pipeline, videos=videos)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def measurement_steps_for_machine(pipeline, connection, worker_name: str) -> Generator | None:
    """`measurement_steps` when no other worker of this machine (host name) is measuring it, else
    None: two measuring at once would each time its swaps beside the other's, and the second's
    samples would add nothing but that. The claim (in Redis) ends with the measurement."""
    key = MEASURER_KEY.format(host=socket.gethostname())
    if not connection.set(key, worker_name, nx=True, ex=MEASURER_TTL_S):
        logger.info("worker %s of this machine measures its speed; this one does not", connection.get(key))
        return None
    return _then_release(measurement_steps(pipeline), connection, key, worker_name)


def _then_release(steps: Generator, connection, key: str, worker_name: str) -> Generator:
    try:
        return (yield from steps)
    finally:
        if connection.get(key) in (worker_name, worker_name.encode()):
            connection.delete(key)


def measurement_steps(pipeline, *, videos: bool = True) -> Generator[None, None, dict[str, str]]:
    """The measurement one timed run at a time (a generator: each `next` runs one swap or clip, at
    most a few seconds), so the GPU worker takes jobs at once and measures between them
    (webapp.jobs.worker.VisageWorker): a job never waits for more than one step, and never runs
    beside one on its worker (a GPU's time, which the job is billed, is measured alone: a machine
    with a GPU runs one worker per GPU; on the CPU, the time billed is CPU time). Each mode's "runs
    as" is recorded as soon as its first swap ran; returns {requested mode: mode that ran}."""
    face_bgr = cv2.imread(str(FACE_PATH))
    if face_bgr is None:
        logger.warning("calibration face %s missing: quotes use the seed calibration", FACE_PATH)
        return {}
    started = time.perf_counter()
    runs_as: dict[str, str] = {}
    notes: dict[str, str] = {}
    for mode in Mode.values:
        options = swap_options_for(_job_like(mode))
        # Untimed: the first run of a mode's models pays for their lazy initialisation (measured:
        # hq's first swap took 0.78 s, the next ones 0.40-0.49 s), which no job pays again.
        first = pipeline.swap_image([face_bgr], _target(face_bgr, IMAGE_SIZES[0]), options)
        runs_as[mode] = mode_ran(mode, reported=[first.mode], enhanced=bool(first.enhancer))
        if first.enhancer_skipped_reason:
            notes[mode] = first.enhancer_skipped_reason
        billing_services.mode_runs_record(runs_as={mode: runs_as[mode]}, notes=notes)
        yield
        for size in IMAGE_SIZES:
            target = _target(face_bgr, size)
            results = []
            for _ in range(REPEATS):
                results.append(pipeline.swap_image([face_bgr], target, options))
                yield
            seconds = Decimal(str(round(statistics.median(r.inference_ms for r in results) / 1000, 6)))
            if seconds > 0:
                billing_services.gpu_sample_record(
                    mode=runs_as[mode],
                    kind=MediaKind.IMAGE,
                    width=size[0],
                    height=size[1],
                    gpu_seconds_per_frame=seconds,
                    origin=SampleOrigin.WARMUP,
                )
        if videos:
            yield from _measure_video(pipeline, face_bgr, mode, options, runs_as)
    billing_services.mode_runs_record(runs_as=runs_as, notes=notes)
    logger.info("worker speed measured in %.1f s; modes run as %s", time.perf_counter() - started, runs_as)
    return runs_as


def _measure_video(
    pipeline, face_bgr: np.ndarray, mode: str, options, runs_as: dict[str, str]
) -> Generator[None, None, None]:
    # Every video job analyses its source photo (each segment does): a fixed part of its GPU time.
    sources = [pipeline.prepare_source([face_bgr]) for _ in range(REPEATS)]
    yield
    source_ms = statistics.median(s.inference_ms for s in sources)
    source = sources[-1]
    face_rgb = cv2.cvtColor(face_bgr, cv2.COLOR_BGR2RGB)
    with tempfile.TemporaryDirectory(prefix="visage-calibrate-") as tmp:
        # The first clip twice: its first run is untimed (lazy initialisation of the video path).
        for index, (width, height, frames) in enumerate([VIDEO_CLIPS[0], *VIDEO_CLIPS]):
            clip = Path(tmp) / f"{index}.mp4"
            write_clip(
                clip,
                ClipSpec(width=width, height=height, fps=VIDEO_FPS, seconds=frames / VIDEO_FPS, audio=False),
                face_rgb,
            )
            info = video_io.probe(clip)
            size = video_io.even_size(info.width, info.height)
            results = []
            for _ in range(1 if index == 0 else REPEATS):
                out = Path(tmp) / f"{index}-out.mp4"
                results.append(process_clip(pipeline, source, clip, out, size=size, options=options))
                yield
            result = results[-1]
            if index == 0 or result.frames < 1:
                continue
            clip_ms = statistics.median(r.inference_ms for r in results)
            seconds = Decimal(str(round((clip_ms + source_ms) / 1000 / result.frames, 6)))
            if seconds > 0:
                billing_services.gpu_sample_record(
                    mode=runs_as.get(mode, mode),
                    kind=MediaKind.VIDEO,
                    width=size[0],
                    height=size[1],
                    gpu_seconds_per_frame=seconds,
                    frames=result.frames,
                    origin=SampleOrigin.WARMUP,
                )
