"""Local in-worker inference vs Triton with and without dynamic batching.

    .venv/bin/python bench/triton.py [--faces-per-job 2] [--jobs-per-client 12] [--workers 3]
    .venv/bin/python bench/triton.py --url grpc://triton:8001 [--metrics-url http://triton:8002/metrics]
                                     [--models-dir /models]   # an existing server (NVIDIA's Triton)

Workload: face-swap jobs of one frame (640×480) with `--faces-per-job` faces each, through the
real InswapperSwapper adapter (align → model → paste back) on a generated inswapper-shaped
model: inswapper's tensor names and shapes and emap, plus three 3×3 convolutions (32 channels)
at 128×128, so every face costs real compute (no model downloads here).

(a) local: 1 worker process with the model in-process (today's path);
(b) Triton, dynamic batching (max batch 16, preferred 4/8/16, queue delay 5 ms), fed by
    `--workers` client worker processes;
(c) Triton without batching (one request per model run), same client workers.

With `--url`, (b) measures that running server instead of starting the stand-in (its
`inswapper_128`, e.g. NVIDIA's Triton on `python -m swap models repository`); `--models-dir` names
the model files (inswapper_128) for (a) and the stand-in (default: the generated model above;
with `--url` and no `--models-dir`, (a) is skipped: there is no local copy to compare with).

Concurrency c = c clients each submitting a job and waiting for it (closed loop); a job's latency
includes its wait for a free worker. Reported: faces/s, job p50/p99, the batch sizes Triton ran,
Triton's own queue vs compute time per request, and the batch fill of every model version that ran
(requests per model execution: nv_inference_request_success / nv_inference_exec_count, from its
metrics port; 1.0 = no batching happened).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import re
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlparse

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swap import align
from swap.config import RuntimeOptions
from swap.inference import triton_client
from swap.serve import launcher
from swap.types import Face, SourceIdentity

CONCURRENCY = (1, 4, 16)


def make_bench_inswapper(path: Path) -> Path:
    """inswapper-shaped model with real per-face compute (3 convs of 32 channels at 128×128)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(16)
    target = helper.make_tensor_value_info("target", TensorProto.FLOAT, ["N", 3, 128, 128])
    source = helper.make_tensor_value_info("source", TensorProto.FLOAT, ["N", 512])
    output = helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 3, 128, 128])

    def weight(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.05).astype(np.float32), name)

    inits = [
        weight("w1", 32, 3, 3, 3),
        weight("w2", 32, 32, 3, 3),
        weight("w3", 3, 32, 3, 3),
        weight("style", 512, 3),
        numpy_helper.from_array(np.array([-1, 3, 1, 1], np.int64), "style_shape"),
    ]
    nodes = [
        helper.make_node("Conv", ["target", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3"], ["c3"], pads=[1, 1, 1, 1]),
        helper.make_node("MatMul", ["source", "style"], ["s"]),
        helper.make_node("Reshape", ["s", "style_shape"], ["s4"]),
        helper.make_node("Add", ["c3", "s4"], ["pre"]),
        helper.make_node("Sigmoid", ["pre"], ["output"]),
    ]
    inits.append(numpy_helper.from_array(rng.standard_normal((512, 512)).astype(np.float32), "emap"))
    graph = helper.make_graph(nodes, "bench_inswapper", [target, source], [output], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


# -- the worker process ---------------------------------------------------------------------------

_swapper = None
_job = None


def _worker_init(models_dir: str, options: RuntimeOptions, faces_per_job: int) -> None:
    global _swapper, _job
    from swap.models import registry

    _swapper = registry.load_adapter("inswapper_128", Path(models_dir), options)
    rng = np.random.default_rng(1)
    frame = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    faces = []
    for i in range(faces_per_job):
        x, y = 20 + (i % 4) * 150, 40 + (i // 4) * 200
        points = align.template_points("arcface_128", 128) + np.float32([x, y])
        faces.append(
            Face(box=np.float32([x, y, x + 128, y + 128]), score=0.9, landmarks_5=points.astype(np.float32))
        )
    embedding = rng.standard_normal(512).astype(np.float32)
    source = SourceIdentity(image=frame, face=faces[0], embedding=embedding, embedding_kind="arcface512")
    _job = (source, frame, faces)


def _run_job(_: int) -> float:
    source, frame, faces = _job
    start = time.perf_counter()
    _swapper.swap(source, frame, faces)
    return time.perf_counter() - start


def _warm(_: int) -> int:
    _run_job(0)
    return os.getpid()


# -- load generator -------------------------------------------------------------------------------


def closed_loop(pool: cf.Executor, concurrency: int, jobs_per_client: int) -> tuple[float, list[float]]:
    """`concurrency` clients, each submitting `jobs_per_client` jobs one after another."""
    latencies: list[float] = []
    lock = threading.Lock()

    def client_loop() -> None:
        for _ in range(jobs_per_client):
            start = time.perf_counter()
            pool.submit(_run_job, 0).result()
            with lock:
                latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    threads = [threading.Thread(target=client_loop) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, latencies


METRIC = re.compile(r"^(nv_inference_\w+)\{([^}]*)\} ([0-9.eE+-]+)$")
LABEL = re.compile(r'(\w+)="([^"]*)"')
Metrics = dict[tuple[str, str], dict[str, float]]  # (model, version) -> {metric: value}


def triton_metrics(url: str) -> Metrics:
    """Triton's nv_inference_* counters per model version (summed over its other labels)."""
    with urllib.request.urlopen(url, timeout=5) as response:
        text = response.read().decode()
    return parse_metrics(text)


def parse_metrics(text: str) -> Metrics:
    values: Metrics = {}
    for line in text.splitlines():
        match = METRIC.match(line)
        if not match:
            continue
        labels = dict(LABEL.findall(match.group(2)))
        if "model" not in labels:
            continue
        counters = values.setdefault((labels["model"], labels.get("version", "")), {})
        counters[match.group(1)] = counters.get(match.group(1), 0.0) + float(match.group(3))
    return values


def delta(before: Metrics, after: Metrics) -> Metrics:
    return {
        key: {name: value - before.get(key, {}).get(name, 0.0) for name, value in counters.items()}
        for key, counters in after.items()
    }


def batch_fill(changes: Metrics) -> dict[str, float]:
    """{"model vN": requests per execution} of every model version that executed."""
    fill = {}
    for (model, version), counters in sorted(changes.items()):
        executions = counters.get("nv_inference_exec_count", 0.0)
        if executions > 0:
            fill[f"{model} v{version}"] = counters.get("nv_inference_request_success", 0.0) / executions
    return fill


def model_counters(changes: Metrics, model: str) -> dict[str, float]:
    summed: dict[str, float] = {}
    for (name, _), counters in changes.items():
        if name == model:
            for metric, value in counters.items():
                summed[metric] = summed.get(metric, 0.0) + value
    return summed


@dataclass
class Server:
    """A Triton to measure: the stand-in this script started, or one running at --url."""

    grpc_url: str  # or an http:// URL: the client speaks both
    metrics_url: str


def batch_histogram(url: str) -> dict[int, int]:
    return triton_client.batch_sizes(url, "inswapper_128").get(1, {})  # Triton's statistics


def run_mode(label, options, workers, models_dir, args, triton=None) -> list[dict]:
    rows = []
    ctx = __import__("multiprocessing").get_context("spawn")
    with cf.ProcessPoolExecutor(
        workers,
        mp_context=ctx,
        initializer=_worker_init,
        initargs=(str(models_dir), options, args.faces_per_job),
    ) as pool:
        list(pool.map(_warm, range(workers * 2)))
        for concurrency in CONCURRENCY:
            before_m = triton_metrics(triton.metrics_url) if triton else {}
            before_b = batch_histogram(triton.grpc_url) if triton else {}
            elapsed, lat = closed_loop(pool, concurrency, args.jobs_per_client)
            row = {
                "mode": label,
                "workers": workers,
                "c": concurrency,
                "faces_s": len(lat) * args.faces_per_job / elapsed,
                "p50_ms": float(np.percentile(lat, 50) * 1000),
                "p99_ms": float(np.percentile(lat, 99) * 1000),
            }
            if triton:
                after_m = triton_metrics(triton.metrics_url)
                after_b = batch_histogram(triton.grpc_url)
                changes = delta(before_m, after_m)
                swapper = model_counters(changes, "inswapper_128")
                requests = max(swapper.get("nv_inference_request_success", 0), 1)
                row["queue_ms"] = swapper.get("nv_inference_queue_duration_us", 0) / requests / 1000
                row["compute_ms"] = (
                    (
                        swapper.get("nv_inference_compute_input_duration_us", 0)
                        + swapper.get("nv_inference_compute_infer_duration_us", 0)
                        + swapper.get("nv_inference_compute_output_duration_us", 0)
                    )
                    / requests
                    / 1000
                )
                row["fill"] = batch_fill(changes)
                row["batches"] = {
                    k: after_b.get(k, 0) - before_b.get(k, 0)
                    for k in sorted(after_b)
                    if after_b.get(k, 0) - before_b.get(k, 0)
                }
            rows.append(row)
            print(format_row(row), flush=True)
    return rows


def format_row(row: dict) -> str:
    text = (
        f"{row['mode']:<26} workers={row['workers']} c={row['c']:<3} {row['faces_s']:7.1f} faces/s  "
        f"p50 {row['p50_ms']:7.1f} ms  p99 {row['p99_ms']:7.1f} ms"
    )
    if "queue_ms" in row:
        text += f"  triton queue {row['queue_ms']:6.1f} ms compute {row['compute_ms']:6.1f} ms per request"
        text += f"  batch sizes {row['batches']}"
        fill = ", ".join(f"{name} {value:.2f}" for name, value in row["fill"].items())
        text += f"  batch fill (requests/execution) {fill or 'none'}"
    return text


def start_triton(models_dir: Path, work: Path, venv: Path, batching: launcher.BatchingSettings, threads: int):
    served = launcher.build_repository(models_dir, work, names=["inswapper_128"], batching=batching)
    process = launcher.start(
        work / "repository",
        venv=venv,
        work_dir=work,
        ports=(launcher.free_port(), launcher.free_port(), launcher.free_port()),
        models=served,
        intra_op_threads=threads,
    )
    process.wait_ready(timeout_s=300)
    return process


def default_metrics_url(url: str) -> str:
    """Triton's metrics port (8002 unless told) on the host of --url."""
    host = urlparse(url if "://" in url else f"grpc://{url}").hostname or "127.0.0.1"
    return f"http://{host}:8002/metrics"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--faces-per-job", type=int, default=2)
    parser.add_argument("--jobs-per-client", type=int, default=12)
    parser.add_argument("--workers", type=int, default=3, help="client workers feeding Triton (2-4)")
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0 = all cores)")
    parser.add_argument("--venv", type=Path, default=launcher.DEFAULT_VENV)
    parser.add_argument("--protocols", default="grpc,http")
    parser.add_argument("--modes", default="a,b,c", help="which of (a) local, (b) batching, (c) no batching")
    parser.add_argument("--url", default=None,
                        help="measure this running Triton (grpc://host:8001 or http://host:8000) as (b)")
    parser.add_argument("--metrics-url", default=None, help="its metrics (default http://<host>:8002/metrics)")
    parser.add_argument("--models-dir", type=Path, default=None,
                        help="model files with inswapper_128 for (a) and the stand-in (default: generated)")
    args = parser.parse_args()
    if args.url is None and not launcher.venv_ready(args.venv):
        print(f"no Triton venv at {args.venv}: run `make triton-venv` first", file=sys.stderr)
        return 1

    import onnxruntime as ort

    print(
        f"machine: {os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.1f}), onnxruntime {ort.__version__} "
        f"{ort.get_available_providers()}; {args.faces_per_job} faces/job, {args.jobs_per_client} jobs per client"
    )
    tmp = Path(tempfile.mkdtemp(prefix="visage-bench-triton-"))
    models_dir = args.models_dir or tmp / "models"
    if args.models_dir is None:
        make_bench_inswapper(models_dir / "inswapper_128.onnx")
    local = RuntimeOptions(
        providers=["CUDAExecutionProvider", "CPUExecutionProvider"], intra_op_threads=args.threads
    )
    modes = set(args.modes.split(","))
    if args.url and args.models_dir is None:
        modes.discard("a")  # no local copy of the server's models to compare with
    rows = run_mode("(a) local, in-worker", local, 1, models_dir, args) if "a" in modes else []
    if args.url:
        server = Server(args.url, args.metrics_url or default_metrics_url(args.url))
        options = replace(local, inference="triton", triton_url=args.url)
        rows += run_mode(f"(b) triton at {args.url}", options, args.workers, models_dir, args, server)
        return summary(rows)

    batched = launcher.BatchingSettings(
        max_batch_size=16, preferred_batch_sizes=[4, 8, 16], max_queue_delay_us=5000
    )
    unbatched = launcher.BatchingSettings(batching=False)
    for label, batching in (("(b) triton dyn. batching", batched), ("(c) triton no batching", unbatched)):
        if label[1] not in modes:
            continue
        work = tmp / label[1]
        triton = start_triton(models_dir, work, args.venv, batching, args.threads)
        try:
            for protocol in args.protocols.split(","):
                if protocol == "http" and label.startswith("(c)"):
                    continue  # the protocol comparison needs one Triton setup only
                url = triton.grpc_url if protocol == "grpc" else triton.http_url
                options = replace(local, inference="triton", triton_url=url)
                rows += run_mode(f"{label} {protocol}", options, args.workers, models_dir, args, triton)
        finally:
            triton.stop()
    return summary(rows)


def summary(rows: list[dict]) -> int:
    print(f"\nsummary (load average now {os.getloadavg()[0]:.1f}; other processes share these CPUs):")
    for row in rows:
        print("  " + format_row(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
