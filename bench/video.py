"""Video throughput on CPU with the classical pipeline; prints figures, asserts nothing.

    python -m bench.video [--seconds 10] [--fps 25] [--width 1280 --height 720] [--interval 10]

1. frames per second for the whole clip, detection on every frame (tracking off);
2. the same with tracking (detect every N frames, patch match + landmark refit in between);
3. segment-parallel: the clip cut in two segments processed by two worker processes (each with
   its own warm pipeline, as two GPU workers would), then joined — against one process doing both.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import time
from pathlib import Path

import cv2
from skimage import data as skdata

from swap.config import PipelineConfig
from swap.pipeline import Pipeline
from swap.video import io, synthetic
from swap.video.process import process_clip
from swap.video.segments import plan_segments
from swap.video.tracking import TrackingConfig

CLASSICAL = dict(
    detector="dlib_hog",
    landmarker="dlib_shape68",
    recognizer="dlib_resnet",
    swapper="classical",
    enhancer="none",
)


def _pipeline_and_source():
    pipeline = Pipeline(PipelineConfig(**CLASSICAL))
    source = pipeline.prepare_source([cv2.flip(cv2.cvtColor(skdata.astronaut(), cv2.COLOR_RGB2BGR), 1)])
    return pipeline, source


def _segment_worker(args) -> tuple[float, int]:
    clip, part, size, start, stop, interval = args
    cv2.setNumThreads(1)  # one core per worker process, as one GPU per worker; no oversubscription
    pipeline, source = _pipeline_and_source()  # warm-up is per worker, as on a GPU host
    started = time.perf_counter()
    result = process_clip(
        pipeline,
        source,
        clip,
        part,
        size=size,
        start=start,
        stop=stop,
        tracking=TrackingConfig(detect_interval=interval),
    )
    return time.perf_counter() - started, result.frames


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--fps", type=int, default=25)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--interval", type=int, default=10, help="tracking: full detection every N frames")
    args = parser.parse_args()

    spec = synthetic.ClipSpec(
        width=args.width, height=args.height, fps=args.fps, seconds=args.seconds, audio=True, face_height=0.35
    )
    with tempfile.TemporaryDirectory(prefix="visage-bench-") as tmp:
        directory = Path(tmp)
        clip = directory / "clip.mp4"
        synthetic.write_clip(clip, spec, skdata.astronaut())
        size = (spec.width, spec.height)
        print(
            f"clip: {spec.width}×{spec.height}, {spec.frames} frames at {spec.fps} fps, classical pipeline, CPU"
        )

        pipeline, source = _pipeline_and_source()
        pipeline.swap_frame(source, next(io.read_frames(clip)))  # warm caches outside the clock
        rates = {}
        for label, tracking in (
            ("detect every frame", TrackingConfig(enabled=False)),
            (f"tracking (detect every {args.interval})", TrackingConfig(detect_interval=args.interval)),
        ):
            started = time.perf_counter()
            result = process_clip(
                pipeline, source, clip, directory / "whole.mp4", size=size, tracking=tracking
            )
            wall = time.perf_counter() - started
            rates[label] = result.frames / wall
            stages = ", ".join(f"{k} {v / result.frames:.1f}" for k, v in result.stage_ms.items() if v)
            print(
                f"{label:32s} {rates[label]:6.2f} frames/s  ({result.frames} frames in {wall:.1f} s; "
                f"{result.detections} detections; ms/frame: {stages})"
            )
        first, second = rates.values()
        print(f"tracking speed-up: {second / first:.2f}×")

        plan = plan_segments(spec.frames, spec.fps, spec.seconds / 2)
        jobs = [(clip, directory / f"part{s.index}.mp4", size, s.start, s.stop, args.interval) for s in plan]
        started = time.perf_counter()
        serial = [_segment_worker(job) for job in jobs]
        serial_wall = time.perf_counter() - started
        started = time.perf_counter()
        with mp.get_context("spawn").Pool(2) as pool:
            parallel = pool.map(_segment_worker, jobs)
        io.join_parts([job[1] for job in jobs], directory / "joined.mp4", fps=spec.fps, audio_from=clip)
        parallel_wall = time.perf_counter() - started
        frames = sum(n for _, n in parallel)
        print(f"{len(plan)} segments, 1 process : {serial_wall:6.1f} s ({frames / serial_wall:.2f} frames/s)")
        print(
            f"{len(plan)} segments, 2 processes: {parallel_wall:6.1f} s incl. spawn, warm-up and join "
            f"({frames / parallel_wall:.2f} frames/s); segment work alone {max(t for t, _ in parallel):.1f} s"
        )
        serial_work = sum(t for t, _ in serial)
        print(
            f"segment-parallel speed-up: {serial_wall / parallel_wall:.2f}x end to end "
            f"(processing only: {serial_work / max(t for t, _ in parallel):.2f}x)"
        )
        assert io.count_frames(directory / "joined.mp4")[0] == spec.frames


if __name__ == "__main__":
    main()
