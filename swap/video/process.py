"""The per-clip loop: decode → (track) → swap every frame on the warm pipeline → encode a part.

Frames without a face are written unchanged (people leave the shot); the caller decides whether
a clip with no swapped frame at all is an error (NoFaceInVideo).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import cv2
import numpy as np

from swap.errors import FaceIndexOutOfRange, NoFaceFound
from swap.inference import clock as inference_clock
from swap.mark import VisibleMark
from swap.pipeline import target_analysis_mode
from swap.types import SourceIdentity, SwapOptions
from swap.video import io
from swap.video.overlap import WriteBehind, ordered_map, read_ahead
from swap.video.tracking import FaceTracker, TrackingConfig


class NoFaceInVideo(NoFaceFound):
    def __init__(self) -> None:
        super().__init__("target")
        self.args = ("No face was found in any frame of the target video.",)


@dataclass
class ClipResult:
    frames: int
    swapped_frames: int
    width: int
    height: int
    fps: Fraction
    inference_ms: float = 0.0
    wall_seconds: float = 0.0
    stage_ms: dict[str, float] = field(default_factory=dict)
    detections: int = 0
    scene_cuts: int = 0
    tracking: dict[str, int] = field(default_factory=dict)  # TrackingStats as a dict
    kept: list[tuple[int, np.ndarray]] = field(default_factory=list)  # (index, unmarked BGR frame)


ProgressCallback = Callable[[int], None]

# How often a clip reports its progress (and so how soon a canceled job's clip stops): at most once
# this many seconds, and once at its end. Every 5 frames, as before 2026-12-06, a worker made 5-6
# calls a second, each a check that the job still runs, a row update and an event to the job's
# streams: ~3.7 ms of CPU a call, ~0.7 ms a frame of a 720p clip on two workers (bench/jobpath.py),
# for a figure that moves by 1 % every 10 frames.
PROGRESS_EVERY_S = 0.5

# Frames swapped at once. One swap thread was the clip's bottleneck on 2 cores (its ~14 ms a 720p
# frame while decode, tracking and encode took ~12 ms of the other core); two bring a 720p clip
# from 44-64 to 55-75 frames/s end to end (bench/video.py, paired runs; the machine's speed varied
# between pairs). The pipeline keeps each frame's clocks apart (context variables).
SWAP_THREADS = 2


def process_clip(
    pipeline,
    source: SourceIdentity,
    video: io.Source,
    part: str | Path,
    *,
    size: tuple[int, int],
    options: SwapOptions | None = None,
    crf: int = 20,
    tracking: TrackingConfig | None = None,
    start: int = 0,
    stop: int | None = None,
    on_progress: ProgressCallback | None = None,
    progress_every_s: float = PROGRESS_EVERY_S,
    mark: VisibleMark | None = None,
    keep: Collection[int] = (),
    keep_size: tuple[int, int] | None = None,
    swap_threads: int = SWAP_THREADS,
) -> ClipResult:
    """Swap frames [start, stop) of `video` at `size` (even width, height) into the part file `part`.

    `swap_threads`: frames swapped at once (in order; 1: on the calling thread).

    `mark`: burnt into every frame in the encoder's write-behind thread, right before encoding (no
    second pass over the clip).

    `keep`: indices (of the whole video) of output frames to keep as they are before the mark, scaled
    to `keep_size` (width, height; None: as encoded), in `ClipResult.kept`: output moderation and
    the poster get the unmarked pixels without decoding the result again.

    `on_progress(frames_done)` is called when `progress_every_s` seconds have passed since the
    clip started or the last call (checked after each frame), and once at the end; it may raise to
    stop (a canceled job), which leaves `part` incomplete.
    """
    started = time.perf_counter()
    progress_due = started + progress_every_s
    fps = io.probe(video).fps
    # Frames are analysed as a photo target of the same job would be (e.g. the largest face only).
    mode = target_analysis_mode(options or SwapOptions(), pipeline.mode_capabilities())
    tracker = FaceTracker(pipeline, tracking or TrackingConfig(), mode=mode)
    width, height = size
    result = ClipResult(frames=0, swapped_frames=0, width=width, height=height, fps=fps)
    stage_ms: dict[str, float] = {}
    with io.PartWriter(part, width=width, height=height, fps=fps, crf=crf) as writer:
        # Threads: decode, track (the next frames' faces are found while these are swapped: tracking
        # needs only the frames before it), `swap_threads` swaps, and encode; this one hands frames
        # on in order. The tracked queue is short: the decoded one already holds 8 frames (memory
        # at 4K).
        decoded = read_ahead(io.read_frames(video, start=start, stop=stop, size=size))
        frames = read_ahead(_tracked(tracker, decoded), depth=4)
        if mark is None:
            encoder = WriteBehind(writer.write)
        else:

            def write_marked(frame):
                # In place: the frame is this loop's own (a swap's output or a decoded array no one
                # else holds; kept frames were copied before the hand-off).
                mark.apply_inplace(frame)
                writer.write(frame)

            encoder = WriteBehind(write_marked)

        def swap_one(item):
            frame, faces, track_inference_ms, track_ms = item
            swapped = None
            if faces:
                try:
                    swapped = pipeline.swap_frame(source, frame, options, faces=faces)
                except (NoFaceFound, FaceIndexOutOfRange):
                    pass  # e.g. face_index 1 in a shot with one face: keep the frame
            return frame, swapped, track_inference_ms, track_ms

        swapped_frames = ordered_map(swap_one, frames, workers=swap_threads)
        try:
            for frame, swapped, track_inference_ms, track_ms in swapped_frames:
                stage_ms["track"] = stage_ms.get("track", 0.0) + track_ms
                result.inference_ms += track_inference_ms
                output = frame
                if swapped is not None:
                    output = swapped.image
                    result.swapped_frames += 1
                    result.inference_ms += swapped.inference_ms
                    for name, ms in swapped.timings_ms.items():
                        if name != "total":
                            stage_ms[name] = stage_ms.get(name, 0.0) + ms
                if start + result.frames in keep:
                    result.kept.append((start + result.frames, _resized_copy(output, keep_size)))
                encoder.submit(output)
                result.frames += 1
                if on_progress is not None and time.perf_counter() >= progress_due:
                    on_progress(result.frames)
                    progress_due = time.perf_counter() + progress_every_s
        finally:
            swapped_frames.close()  # a canceled job: frames not started are dropped, running ones end
            frames.close()  # stops the reader thread if we stopped early (a canceled job)
            encoder.close()  # waits for the backlog, so the part is complete when the writer closes
        stage_ms["encode"] = encoder.seconds * 1000  # in the writer thread, overlapping the swaps
    for name, ms in tracker.timer.timings_ms.items():  # "track" includes them
        stage_ms[name] = stage_ms.get(name, 0.0) + ms
    if on_progress is not None:
        on_progress(result.frames)
    result.stage_ms = {name: round(ms, 2) for name, ms in stage_ms.items()}
    result.detections = tracker.stats.detections
    result.scene_cuts = tracker.stats.scene_cuts
    result.tracking = dataclasses.asdict(tracker.stats)
    result.wall_seconds = time.perf_counter() - started
    return result


def _tracked(tracker: FaceTracker, frames: Iterable[np.ndarray]) -> Iterator[tuple[np.ndarray, list, float, float]]:
    """(frame, its faces, the tracking's inference ms, its wall ms) for each frame, in order."""
    for frame in frames:
        with inference_clock.session() as clock:
            started = time.perf_counter()
            faces = tracker.faces(frame)
            elapsed_ms = (time.perf_counter() - started) * 1000
        yield frame, faces, clock.inference_ms, elapsed_ms


def _resized_copy(frame: np.ndarray, size: tuple[int, int] | None) -> np.ndarray:
    if size is None or size == (frame.shape[1], frame.shape[0]):
        return frame.copy()  # the frame may be the decoder's buffer
    # Bilinear, like the decoder's scaler that sampled frames before: INTER_AREA costs ~15× more
    # in the frame loop for no gain to moderation.
    return cv2.resize(frame, size, interpolation=cv2.INTER_LINEAR)


def swap_video(
    pipeline,
    source: SourceIdentity,
    video: io.Source,
    output: str | Path,
    *,
    size: tuple[int, int] | None = None,
    options: SwapOptions | None = None,
    crf: int = 20,
    tracking: TrackingConfig | None = None,
    on_progress: ProgressCallback | None = None,
) -> ClipResult:
    """A whole clip in one go (CLI, tests, short jobs): one part, then the original audio muxed in."""
    info = io.probe(video)
    size = io.even_size(*(size or (info.width, info.height)))
    part = Path(output).with_suffix(".part.mp4")
    try:
        result = process_clip(
            pipeline,
            source,
            video,
            part,
            size=size,
            options=options,
            crf=crf,
            tracking=tracking,
            on_progress=on_progress,
        )
        if result.swapped_frames == 0:
            raise NoFaceInVideo()
        io.join_parts([part], output, fps=result.fps, original=video)
    finally:
        part.unlink(missing_ok=True)
    return result
