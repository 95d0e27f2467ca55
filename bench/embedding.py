"""dlib128 descriptors: dlib's own ResNet against the same network converted to onnxruntime.

Prints, for one face and for four faces of one frame (one batched run), the median wall time
and CPU time per face (the CPU time is what a job is billed: the calling thread's plus
onnxruntime's pool threads'), for dlib, onnxruntime on all cores and on one thread; then
what loading costs (dlib's model; parsing + converting the .dat; creating the session).
Prints figures only; about half a minute.

    python bench/embedding.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import dlib
import numpy as np
from skimage import data

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swap import dlib_models
from swap.config import PipelineConfig, RuntimeOptions
from swap.face_recognition.dlib_resnet import DlibResnetRecognizer, _shape
from swap.inference import clock as inference_clock
from swap.inference.sessions import get_model_session
from swap.models.dlib_onnx import convert_file
from swap.pipeline import Pipeline


def four_faces(face: np.ndarray) -> np.ndarray:
    half = cv2.resize(face, (320, 320), interpolation=cv2.INTER_AREA)
    return np.vstack([np.hstack([half, cv2.flip(half, 1)])] * 2)


def timed(call, runs: int) -> tuple[float, float]:
    """Median wall and billed CPU milliseconds of `call()` (one warm-up run first)."""
    call()
    walls, cpus = [], []
    for _ in range(runs):
        with inference_clock.session() as clock:
            start = time.perf_counter()
            call()
            walls.append((time.perf_counter() - start) * 1000)
        cpus.append(clock.inference_ms)
    return statistics.median(walls), statistics.median(cpus)


def dlib_call(frame: np.ndarray, faces):
    model = dlib_models.resnet_recognizer()
    rgb = np.ascontiguousarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
    shapes = dlib.full_object_detections([_shape(f) for f in faces])

    def call():
        with inference_clock.measure("dlib_resnet_reference", "dlib", len(faces)):
            model.compute_face_descriptor(rgb, shapes, 0)

    return call


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    pipeline = Pipeline(
        PipelineConfig(models_dir=Path(tempfile.mkdtemp()), runtime=RuntimeOptions(("CPUExecutionProvider",)))
    )
    astronaut = cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR)
    frames = {"1 face": astronaut, "4 faces": four_faces(astronaut)}
    analysed = {name: (frame, pipeline.analyse(frame, embed=False)) for name, frame in frames.items()}
    engines = {
        "onnxruntime all cores": pipeline.recognizer,
        "onnxruntime 1 thread": DlibResnetRecognizer(
            RuntimeOptions(("CPUExecutionProvider",), intra_op_threads=1)
        ),
    }

    print(f"{'':24s} {'faces':>5s} {'wall ms/face':>13s} {'CPU ms/face':>12s}")
    for frame, faces in analysed.values():
        rows = {"dlib": dlib_call(frame, faces)}
        rows.update({label: (lambda r=r, f=frame, fs=faces: r.embed(f, fs)) for label, r in engines.items()})
        for label, call in rows.items():
            wall, cpu = timed(call, args.runs)
            print(f"{label:24s} {len(faces):5d} {wall / len(faces):13.1f} {cpu / len(faces):12.1f}")

    path = dlib_models.model_path(dlib_models.RESNET)
    start = time.perf_counter()
    dlib.face_recognition_model_v1(path)
    dlib_load = time.perf_counter() - start
    start = time.perf_counter()
    converted = convert_file(path)
    convert = time.perf_counter() - start
    start = time.perf_counter()
    get_model_session(
        f"bench-{time.time_ns()}", converted.onnx_bytes, RuntimeOptions(("CPUExecutionProvider",))
    )
    session = time.perf_counter() - start
    print(
        f"load: dlib model {dlib_load * 1000:.0f} ms; parse + convert .dat {convert * 1000:.0f} ms; "
        f"onnxruntime session {session * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
