"""Video throughput on CPU with the default engine (what a worker runs); prints figures, asserts nothing.

    python -m bench.video [--seconds 30] [--fps 30] [--width 1280 --height 720] [--repeats 3]
                          [--models var/models] [--save-frames DIR]

The engine is `PipelineConfig()` with the models folder set, as webapp/jobs/engine.py builds it
(MediaPipe's BlazeFace + Face Mesh with the classical swapper when those models are fetched), and
the clip is processed as webapp/jobs/steps/video.swap_clip does: standard mode, the worker's CRF,
tracking (detect every VIDEO_DETECT_INTERVAL frames), the visible mark burnt in on the encoder
thread, output moderation's frames kept. Reported per repeat and as the median:
end-to-end frames/s (decode + track + swap + encode, the join and audio mux excluded), the
per-stage times (stage time, summed over frames; encode runs in its own thread, overlapping),
and the tracker's figures (full detections, scene cuts, lost tracks).

`--save-frames DIR` writes a few decoded output frames (PNG) so two versions of the code can be
compared (`--compare DIR_A DIR_B`: PSNR and SSIM per frame, whole frame and the face's box); `--job` also times the rest of the worker's video path after the
clip: join + audio mux, the poster decode and output moderation's NSFW detector over the kept frames.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import cv2
import django
import numpy as np
from skimage import data as skdata
from skimage.metrics import structural_similarity

from moderation import nsfw
from swap.config import PipelineConfig
from swap.inference.clock import thread_cpu_seconds
from swap.mark import MarkStyle, VisibleMark
from swap.pipeline import Pipeline
from swap.types import SwapOptions
from swap.video import io, synthetic
from swap.video.process import SWAP_THREADS, process_clip
from swap.video.tracking import TrackingConfig

SAVED_FRAMES = (0, 5, 15, 150, 449, 451, 600, 899)
CRF_STANDARD = 20  # webapp.settings.VIDEO_CRF["standard"]
DETECT_INTERVAL = 10  # webapp.settings.VIDEO_DETECT_INTERVAL


def _pipeline_and_source(models: Path):
    pipeline = Pipeline(PipelineConfig(models_dir=models))
    source = pipeline.prepare_source([cv2.flip(cv2.cvtColor(skdata.astronaut(), cv2.COLOR_RGB2BGR), 1)])
    return pipeline, source


class ThreadCpu:
    """Each thread's CPU time over a run, by its name (Python's, else the kernel's comm; digits
    dropped so a pool's threads add up): the threads of a clip come and go with it, so they are
    read every `every` seconds and each one's last reading kept (a thread that lives less than
    that is missed)."""

    def __init__(self, every: float = 0.05) -> None:
        self.every = every
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.names: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="bench-thread-cpu", daemon=True)

    def __enter__(self) -> ThreadCpu:
        self._read()
        self.first = dict(self.last)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._read()

    def _poll(self) -> None:
        while not self._stop.wait(self.every):
            self._read()

    def _read(self) -> None:
        python_names = {t.native_id: t.name for t in threading.enumerate()}
        for entry in os.scandir("/proc/self/task"):
            tid = int(entry.name)
            try:
                self.last[tid] = thread_cpu_seconds(tid)
                if tid not in self.names:
                    with open(f"/proc/self/task/{tid}/comm") as comm:
                        self.names[tid] = python_names.get(tid) or comm.read().strip()
            except OSError:  # gone meanwhile
                continue

    def by_name(self) -> Counter:
        spent: Counter = Counter()
        for tid, seconds in self.last.items():
            if self.names.get(tid) == self._thread.name:
                continue
            spent[re.sub(r"[_-]?\d+$", "", self.names.get(tid, "?"))] += seconds - self.first.get(tid, 0.0)
        return spent


def _one_run(pipeline, source, clip: Path, out: Path, spec, keep, swap_threads: int) -> dict:
    mark = VisibleMark(MarkStyle(text="AI-generated"))
    threads = ThreadCpu().__enter__()
    started, cpu_started, main_started = time.perf_counter(), time.process_time(), time.thread_time()
    result = process_clip(
        pipeline,
        source,
        clip,
        out,
        size=(spec.width, spec.height),
        options=SwapOptions(),
        crf=CRF_STANDARD,
        tracking=TrackingConfig(detect_interval=DETECT_INTERVAL),
        mark=mark,
        keep=keep,
        keep_size=io.sample_size(spec.width, spec.height, 720),
        swap_threads=swap_threads,
    )
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    main = time.thread_time() - main_started  # the frame loop's thread: its swaps with --swap-threads 1
    threads.__exit__(None, None, None)
    return {
        "wall": wall, "cpu": cpu, "main": main, "fps": result.frames / wall, "result": result,
        "threads": threads.by_name(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", type=Path, default=Path(os.environ.get("VISAGE_MODELS_DIR", "var/models")))
    parser.add_argument("--swap-threads", type=int, default=SWAP_THREADS, help="frames swapped at once")
    parser.add_argument("--clip", type=Path, help="reuse this clip instead of rendering one")
    parser.add_argument("--save-frames", type=Path, help="write a few output frames here (PNG)")
    parser.add_argument("--job", action="store_true", help="also time join + mux + poster + face checks")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"), help="compare saved frames")
    args = parser.parse_args()
    cv2.setNumThreads(1)  # as a worker runs OpenCV (visage_worker.opencv_single_threaded)
    if args.compare:
        compare(*args.compare, args.models)
        return

    spec = synthetic.ClipSpec(
        width=args.width, height=args.height, fps=args.fps, seconds=args.seconds, audio=True, face_height=0.35
    )
    with tempfile.TemporaryDirectory(prefix="visage-bench-") as tmp:
        directory = Path(tmp)
        clip = args.clip or directory / "clip.mp4"
        if args.clip is None or not clip.exists():
            synthetic.write_clip(clip, spec, skdata.astronaut())
        info = io.probe(clip)
        keep = frozenset([*io.sample_indices(info.frames, info.duration_seconds), info.frames // 2])
        pipeline, source = _pipeline_and_source(args.models)
        print(
            f"clip: {spec.width}x{spec.height}, {info.frames} frames at {spec.fps} fps; engine: "
            f"{pipeline.detector.name} / {pipeline.landmarker.name} / {pipeline.swapper.name}; "
            f"crf {CRF_STANDARD}, preset {io.DEFAULT_PRESET}, detect every {DETECT_INTERVAL}, "
            f"{args.swap_threads} swap thread(s); "
            f"load {os.getloadavg()[0]:.2f}"
        )
        pipeline.swap_frame(source, next(io.read_frames(clip)))  # warm caches outside the clock
        runs = []
        out = directory / "out.mp4"
        for repeat in range(args.repeats):
            run = _one_run(pipeline, source, clip, out, spec, keep, args.swap_threads)
            runs.append(run)
            r = run["result"]
            stages = ", ".join(f"{k} {v / 1000:.2f}" for k, v in sorted(r.stage_ms.items()) if v)
            print(
                f"run {repeat + 1}: {run['fps']:6.1f} frames/s ({r.frames} frames in {run['wall']:.2f} s, "
                f"CPU {run['cpu'] / r.frames * 1000:.1f} ms/frame, calling thread {run['main'] / r.frames * 1000:.1f}, "
                f"{r.swapped_frames} swapped; tracking {getattr(r, 'tracking', None) or r.detections}; "
                f"load {os.getloadavg()[0]:.2f}) stage s: {stages}"
            )
            per_thread = ", ".join(
                f"{name} {seconds / r.frames * 1000:.1f}" for name, seconds in run["threads"].most_common() if seconds > 0.005
            )
            print(f"  CPU ms/frame by thread: {per_thread}")
        walls = [run["wall"] for run in runs]
        median = statistics.median(walls)
        cpu = statistics.median(run["cpu"] for run in runs) / info.frames * 1000
        main = statistics.median(run["main"] for run in runs) / info.frames * 1000
        print(
            f"median: {info.frames / median:.1f} frames/s end to end ({median:.2f} s for {info.frames} frames); "
            f"CPU {cpu:.1f} ms/frame (all threads; 2 cores at 60 frames/s allow 33)"
            + (f", swaps on the calling thread {main:.1f} ms/frame" if args.swap_threads <= 1 else "")
        )
        if args.save_frames:
            args.save_frames.mkdir(parents=True, exist_ok=True)
            wanted = set(SAVED_FRAMES)
            for index, frame in enumerate(io.read_frames(out)):
                if index in wanted:
                    cv2.imwrite(str(args.save_frames / f"frame{index:04d}.png"), frame)
            print(f"saved frames {sorted(wanted)} to {args.save_frames}")
        if args.job:
            _job_tail(clip, out, directory, runs[-1]["result"], info, spec)


def _job_tail(clip, part, directory, result, info, spec) -> None:
    """The worker's steps after the clip (webapp.jobs.steps.video.finish) that cost CPU, without
    its database and storage: join + audio mux, the original's poster frame decoded by seeking, and
    output moderation's model: NudeNet's detector over the kept frames in one batch, as
    moderation.services.screen_video_output runs it (the first call, which loads the model, not timed)."""
    started = time.perf_counter()
    io.join_parts([part], directory / "result.mp4", fps=info.fps, original=clip)
    joined = time.perf_counter()
    index, _ = min(result.kept, key=lambda item: abs(item[0] - info.frames // 2))
    next(io.read_frames(clip, start=index, stop=index + 1, size=(spec.width, spec.height)))
    poster = time.perf_counter()
    # The detector as a moderation worker holds it (its thread count is a Django setting).
    os.environ.setdefault("VISAGE_DATA_DIR", str(directory))
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{directory / 'bench.sqlite3'}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    django.setup()
    detector = nsfw.get_detector()
    detector.detect(result.kept[0][1])
    loaded = time.perf_counter()
    detector.detect_many([frame for _, frame in result.kept])
    screened = time.perf_counter()
    print(
        f"job tail: join+mux {joined - started:.2f} s, poster decode {poster - joined:.2f} s, "
        f"NSFW detector over {len(result.kept)} kept frames {screened - loaded:.2f} s"
    )


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255**2 / mse)


def compare(first: Path, second: Path, models: Path) -> None:
    """PSNR / SSIM of the frames two runs saved, over the frame and over the face's box."""
    pipeline = Pipeline(PipelineConfig(models_dir=models))
    for path in sorted(first.glob("frame*.png")):
        a, b = cv2.imread(str(path)), cv2.imread(str(second / path.name))
        faces = pipeline.analyse(a, embed=False)
        line = f"{path.stem}: frame PSNR {psnr(a, b):5.1f} dB SSIM {structural_similarity(a, b, channel_axis=2):.4f}"
        if faces:
            x1, y1, x2, y2 = faces[0].box.astype(int)
            fa, fb = a[y1:y2, x1:x2], b[y1:y2, x1:x2]
            line += f"; face PSNR {psnr(fa, fb):5.1f} dB SSIM {structural_similarity(fa, fb, channel_axis=2):.4f}"
        print(line)


if __name__ == "__main__":
    main()
