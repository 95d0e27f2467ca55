"""Per-stage latency of the classical pipeline on CPU (prints figures, no asserts).

Pinned to ONE core (like `taskset -c 0` plus cv2.setNumThreads(1)); target: a 512 px frame
under 400 ms. Source = the astronaut; targets from ../shared/faces when present, else the
astronaut resized. Ends with the ONNX swapper throughput (bench/onnx_throughput.py) on all cores.

    python bench/engine.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import cv2
import numpy as np
from skimage import data

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swap.config import PipelineConfig
from swap.pipeline import Pipeline

FACES = Path(__file__).resolve().parents[2] / "shared" / "faces"
STAGES = ("detect", "landmarks", "embed", "swap", "enhance", "paste", "total")


def fit(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """Scale to `height`, then pad (reflect) or crop to `width`: a landscape video frame."""
    s = height / image.shape[0]
    scaled = cv2.resize(image, (round(image.shape[1] * s), height), interpolation=cv2.INTER_CUBIC)
    if scaled.shape[1] >= width:
        x = (scaled.shape[1] - width) // 2
        return np.ascontiguousarray(scaled[:, x : x + width])
    extra = width - scaled.shape[1]
    return cv2.copyMakeBorder(scaled, 0, 0, extra // 2, extra - extra // 2, cv2.BORDER_REFLECT_101)


def targets(astronaut: np.ndarray) -> dict[str, np.ndarray]:
    portrait = cv2.imread(str(FACES / "paul_rudd_1.jpg")) if (FACES / "paul_rudd_1.jpg").is_file() else None
    base = portrait if portrait is not None else astronaut
    s = 512 / max(base.shape[:2])
    small = cv2.resize(
        base, (round(base.shape[1] * s), round(base.shape[0] * s)), interpolation=cv2.INTER_AREA
    )
    return {f"512 px ({small.shape[1]}x{small.shape[0]})": small, "1080p (1920x1080)": fit(base, 1920, 1080)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()

    all_cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(all_cores)})
    cv2.setNumThreads(1)

    astronaut = cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR)
    pipeline = Pipeline(PipelineConfig(models_dir=Path("var/models-none"), swapper="classical"))
    pipeline.warm_up()
    print(f"backends: {pipeline.backends}; one core, cv2 threads 1; {args.runs} runs, medians")
    source = pipeline.prepare_source([astronaut])
    print(f"{'target':<22}" + "".join(f"{s:>10}" for s in STAGES) + f"{'inference':>11}{'outside':>9}")
    for label, frame in targets(astronaut).items():
        results = [pipeline.swap_frame(source, frame) for _ in range(args.runs + 1)][1:]
        med = {s: statistics.median(r.timings_ms[s] for r in results) for s in STAGES}
        inference = statistics.median(r.inference_ms for r in results)
        outside = 1 - inference / med["total"]
        print(
            f"{label:<22}"
            + "".join(f"{med[s]:>10.1f}" for s in STAGES)
            + f"{inference:>11.1f}{outside:>8.0%}"
        )
    print("(ms; 'inference' = time inside dlib model calls, 'outside' = share of total spent elsewhere)")

    os.sched_setaffinity(0, all_cores)
    cv2.setNumThreads(-1)
    try:
        from bench.onnx_throughput import onnx_throughput
    except ImportError:
        print("bench/onnx_throughput.py not available; skipping ONNX throughput")
        return
    print()
    try:
        onnx_throughput([])  # its own defaults, not this script's command line
    except TypeError:
        onnx_throughput()


if __name__ == "__main__":
    main()
