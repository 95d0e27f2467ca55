"""One-shot GPU check for the ONNX engine: is CUDA really used, how fast, does VRAM come back.

    python bench/gpu_check.py [--quick] [--allow-cpu] [--cpu-as-gpu]

Checks, each printed PASS / FAIL / WARN / SKIP, then a summary:
  1. environment: onnxruntime version, file and installed distributions, the CPU-shadows-GPU
     problem (`swap.inference.sessions.onnxruntime_install_problem`), providers, CUDA / TensorRT, nvidia-smi;
  2. a session built by `swap.inference.sessions.get_session` with [CUDA, CPU] reports CUDA first, and
     its output on the realistic-size inswapper stand-in (bench/onnx_throughput.py, width 1024,
     ~165 GMAC/face) matches the CPU session's (fp32 graph; CUDA may use TF32 convolutions,
     hence a tolerance of 5e-2 max / 1e-3 mean abs on the [0, 1] output);
  3. throughput of that stand-in: plain `session.run` (host arrays in and out, what the adapters
     do) at batch 1, 4, 16, 64 on CUDA (median of >= 10 runs after a warm-up run per shape)
     and, on CUDA only, IO binding with the inputs already on the device; CPU at batch 1 and 4
     (also 16 and 64 without --quick); the speed-up at each batch;
  4. the real adapter path: `InswapperSwapper` with the tiny generated inswapper
     (swap/models/standins.py) swapping 1 and 8 faces (synthetic landmarks) of a 1080p frame
     tiled from skimage's astronaut equals the CPU result (<= 1 grey level), and `Pipeline`
     (generated yoloface/2dfan4/arcface/inswapper on CUDA) meters `inference_ms` > 0;
  5. GPU memory (nvidia-smi memory.used) before/after creating sessions and after
     `clear_sessions()` + gc: fails only if a large allocation is not released at all;
  6. NVML through nvidia-ml-py (what a GPU worker reports as telemetry): utilisation and memory
     of the device, read while a batch-16 run repeats and after it.

In the gpu-worker image (deploy/Containerfile; bench/ and tests/ are not in the image, mount them):

    podman run --rm --device nvidia.com/gpu=all -v $PWD/bench:/app/bench:ro -v $PWD/tests:/app/tests:ro \
        localhost/visage-gpu-worker python bench/gpu_check.py

Exit status: 0 all passed; 1 a check failed; 2 no CUDAExecutionProvider and no --allow-cpu (so a
GPU box with a CPU-only onnxruntime can't pass silently). Without CUDA, checks 2-5 print
"CUDAExecutionProvider not available: skipping GPU checks" and a quick CPU smoke test runs
instead. --cpu-as-gpu runs checks 2-5 with the CPU provider standing in for CUDA (to test this
script on a machine without a GPU; the "runs on CUDA" assertions are then reported as SKIP).

On the H200 device machine (python3 3.12 with torch and CUDA 13 libraries, a CPU-only
onnxruntime 1.30, no network): onnxruntime-gpu must travel as a wheel. The installed
onnxruntime here is 1.32.0; PyPI's newest onnxruntime-gpu is 1.31.1 (no 1.32.0 yet), built
for CUDA 13 (needs nvidia-cuda-runtime 13, cudnn-cu13 9, cufft, curand, nvrtc: all in that image).
Its wheel is 255.6 MB and a device call carries at most 64 MiB, so it goes in 4 parts, staged
into /tmp on the same warm machine by 3 quick calls and joined by the 4th. The machine is
given back ~30 s after a call ends, so issue the 4 calls back to back.

Here, once, in the repo root:

    echo /.ortgpu/ >> .git/info/exclude
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 -d /tmp/ortw onnxruntime-gpu==1.31.1
    for i in 0 1 2 3; do mkdir -p .ortgpu/p$i; done; split -n 4 -d -a 1 /tmp/ortw/onnxruntime_gpu-1.31.1-cp312-cp312-manylinux_2_28_x86_64.whl /tmp/ortw/part; for i in 0 1 2 3; do mv /tmp/ortw/part$i .ortgpu/p$i/; done
    sha256sum /tmp/ortw/onnxruntime_gpu-1.31.1-cp312-cp312-manylinux_2_28_x86_64.whl   # must print 05d548956197b9d01f59b625de740e0d6be3593f874e241a12dc0362650ecdf7
    python3 -m pip download --no-deps --only-binary=:all: -d .ortgpu/p3 nvidia-ml-py   # for check 6 (a few hundred kB)

Device calls 1-3 (carry [".ortgpu/pN"], N = 0, 1, 2; timeout_s 120):

    mkdir -p /tmp/ortgpu && cp .ortgpu/p*/part* /tmp/ortgpu/ && ls -l /tmp/ortgpu

Device call 4 (carry [".ortgpu/p3"], timeout_s 420), the one line:

    set -o pipefail; mkdir -p /tmp/ortgpu && cp .ortgpu/p*/part* /tmp/ortgpu/ && W=/tmp/onnxruntime_gpu-1.31.1-cp312-cp312-manylinux_2_28_x86_64.whl && cat /tmp/ortgpu/part0 /tmp/ortgpu/part1 /tmp/ortgpu/part2 /tmp/ortgpu/part3 > $W && echo "05d548956197b9d01f59b625de740e0d6be3593f874e241a12dc0362650ecdf7  $W" | sha256sum -c && python3 -m pip uninstall -y -q onnxruntime && python3 -m pip install -q --no-index --no-deps --no-compile $W .ortgpu/p3/nvidia_ml_py-*.whl && PYTHONUNBUFFERED=1 timeout 300 python3 bench/gpu_check.py 2>&1 | tee $OUT/gpu_check.log

Expect about 2-3 minutes for the script itself on an H200; the log also lands in $OUT.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import onnxruntime as ort

from bench.onnx_throughput import build_stand_in
from swap import align
from swap.config import RuntimeOptions, available_providers
from swap.inference.runs import warm_up
from swap.inference.sessions import clear_sessions, get_session, onnxruntime_install_problem
from swap.models import standins as fx
from swap.swappers.inswapper import InswapperSwapper
from swap.types import Face, SourceIdentity, SwapOptions

CUDA = "CUDAExecutionProvider"
TRT = "TensorrtExecutionProvider"
CPU = "CPUExecutionProvider"
SKIP_LINE = "CUDAExecutionProvider not available: skipping GPU checks"
FRAME_H, FRAME_W = 1080, 1920


@dataclass
class Report:
    results: list[tuple[str, str, str]] = field(default_factory=list)

    def add(self, name: str, status: str, detail: str = "") -> None:
        self.results.append((name, status, detail))
        print(f"  [{status}] {name}" + (f": {detail}" if detail else ""), flush=True)

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.add(name, "PASS" if ok else "FAIL", detail)
        return ok

    @property
    def failed(self) -> list[str]:
        return [name for name, status, _ in self.results if status == "FAIL"]


def section(title: str) -> None:
    print(f"\n== {title} ==", flush=True)


# --- nvidia-smi ----------------------------------------------------------------------------------


def nvidia_smi() -> list[dict[str, str]] | None:
    """One dict per GPU (name, memory.total, memory.used in MiB), or None without nvidia-smi."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "--query-gpu=name,memory.total,memory.used", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout  # fmt: skip
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"  nvidia-smi failed: {exc}")
        return None
    gpus = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            gpus.append({"name": parts[0], "total_mib": parts[1], "used_mib": parts[2]})
    return gpus


def gpu_used_mib(device_id: int) -> float | None:
    gpus = nvidia_smi()
    if not gpus or device_id >= len(gpus):
        return None
    try:
        return float(gpus[device_id]["used_mib"])
    except ValueError:
        return None


# --- 1. environment --------------------------------------------------------------------------------


def check_environment(report: Report, args) -> bool:
    """Print the environment; return whether CUDA is usable for checks 2-5."""
    section("1. environment")
    dists = {}
    for dist in ("onnxruntime", "onnxruntime-gpu", "onnxruntime-directml", "onnxruntime-openvino"):
        try:
            dists[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    print(f"  python {sys.version.split()[0]}, numpy {np.__version__}")
    print(f"  onnxruntime {ort.__version__} imported from {Path(ort.__file__).parent}")
    print(f"  distributions installed: {', '.join(f'{k}=={v}' for k, v in dists.items()) or 'none found'}")
    providers = available_providers()
    print(f"  available providers: {providers}  (ort.get_device() = {ort.get_device()})")
    has_cuda, has_trt = CUDA in providers, TRT in providers
    print(f"  CUDAExecutionProvider: {'yes' if has_cuda else 'NO'};  TensorrtExecutionProvider: "
          f"{'yes (needs TensorRT libraries at session time; not requested here)' if has_trt else 'no'}")  # fmt: skip
    problem = onnxruntime_install_problem()
    if problem:
        if has_cuda:
            report.add("onnxruntime distributions", "WARN", f"{problem} (the GPU build is the one imported)")
        else:
            report.add("onnxruntime distributions", "FAIL", problem)
    else:
        report.add("onnxruntime distributions", "PASS", "no CPU build shadowing a GPU build")
    gpus = nvidia_smi()
    if gpus is None:
        print("  nvidia-smi: not found")
    for i, gpu in enumerate(gpus or []):
        print(f"  GPU {i}: {gpu['name']}, {gpu['total_mib']} MiB total, {gpu['used_mib']} MiB used")
    if has_cuda:
        preload = getattr(ort, "preload_dlls", None)
        if preload is not None:
            try:
                preload()  # CUDA/cuDNN from the nvidia-* wheels, so the CUDA EP finds them
                print("  ort.preload_dlls(): ok")
            except Exception as exc:  # noqa: BLE001 - report and go on; check 2 shows the effect
                print(f"  ort.preload_dlls() failed: {exc!r}")
    if args.cpu_as_gpu:
        print("  --cpu-as-gpu: checks 2-5 run with CPUExecutionProvider standing in for CUDA")
        return True
    report.add("CUDAExecutionProvider available", "PASS" if has_cuda else "SKIP")
    return has_cuda


# --- helpers ---------------------------------------------------------------------------------------


def stand_in_feeds(batch: int, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "target": rng.random((batch, 3, 128, 128), dtype=np.float32),
        "source": (rng.standard_normal((batch, 512)) * 0.1).astype(np.float32),
    }


def median_run_s(session, feeds: dict[str, np.ndarray], runs: int, warm: bool = True) -> float:
    if warm:
        session.run(None, feeds)  # warm-up at this shape (allocation, cuDNN algorithm search)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(None, feeds)  # host arrays out: includes the device sync and D2H copy
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def median_iobinding_s(session, feeds: dict[str, np.ndarray], runs: int, device_id: int) -> float:
    """Inputs copied to the GPU once; the output stays on the GPU: model time without transfers."""
    binding = session.io_binding()
    for name, value in feeds.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(value, "cuda", device_id))
    binding.bind_output("output", "cuda", device_id)
    session.run_with_iobinding(binding)
    times = []
    for _ in range(runs):
        binding.synchronize_inputs()
        start = time.perf_counter()
        session.run_with_iobinding(binding)
        binding.synchronize_outputs()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def astronaut_frame() -> np.ndarray:
    """1080p BGR frame tiled from skimage's astronaut (random texture if skimage is missing)."""
    try:
        from skimage import data

        tile = data.astronaut()[..., ::-1]
        reps = (-(-FRAME_H // tile.shape[0]), -(-FRAME_W // tile.shape[1]), 1)
        return np.ascontiguousarray(np.tile(tile, reps)[:FRAME_H, :FRAME_W])
    except Exception:  # noqa: BLE001 - no skimage or no data: any texture will do
        return np.random.default_rng(11).integers(0, 256, (FRAME_H, FRAME_W, 3), dtype=np.uint8)


def synthetic_faces(count: int) -> list[Face]:
    """Faces on a grid with arcface_128 landmarks scaled to ~205 px (as bench/onnx_throughput)."""
    faces = []
    for i in range(count):
        x, y = 40 + (i % 8) * 230, 60 + (i // 8) * 500
        points = align.template_points("arcface_128", 128) * 1.6 + np.float32([x, y])
        faces.append(Face(box=np.float32([x, y, x + 205, y + 205]), score=1.0 - 0.01 * i, landmarks_5=points))
    return faces


def source_identity(frame: np.ndarray, face: Face) -> SourceIdentity:
    embedding = np.random.default_rng(7).standard_normal(512).astype(np.float32) * 3
    return SourceIdentity(image=frame, face=face, embedding=embedding, embedding_kind="arcface512")


def pixel_diff(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.abs(a.astype(np.int16) - b.astype(np.int16)).max())


def cuda_libraries_load(tmp: Path) -> bool:
    """A tiny CUDA session; if onnxruntime fell back to CPU, show the missing libraries and retry
    after `import torch` (which loads CUDA/cuDNN from the nvidia-* wheels process-wide)."""
    probe = fx.make_inswapper(tmp / "probe" / "inswapper_probe.onnx")
    options = RuntimeOptions(providers=[CUDA, CPU])
    if get_session(probe, options).get_providers()[0] == CUDA:
        return True
    print("  a CUDA session fell back to CPU: the CUDA provider's libraries did not load")
    provider_lib = Path(ort.__file__).parent / "capi" / "libonnxruntime_providers_cuda.so"
    if provider_lib.exists() and shutil.which("ldd"):
        out = subprocess.run(["ldd", str(provider_lib)], capture_output=True, text=True).stdout
        missing = [line.split()[0] for line in out.splitlines() if "not found" in line]
        print(f"  ldd {provider_lib.name}: missing {missing or 'nothing'}")
    try:
        import torch

        clear_sessions()
        ok = get_session(probe, options).get_providers()[0] == CUDA
        print(
            f"  retried after `import torch` (CUDA {torch.version.cuda}): {'CUDA now works' if ok else 'still CPU'}"
        )
        return ok
    except ImportError:
        print("  torch not installed: no second way to load the CUDA libraries")
        return False


# --- 2 + 3. stand-in on CUDA, throughput -------------------------------------------------------------


def check_stand_in(report: Report, args, gpu: RuntimeOptions, cpu: RuntimeOptions, tmp: Path) -> None:
    section(f"2. session on {gpu.providers[0]} (realistic-size inswapper stand-in)")
    if not args.cpu_as_gpu:
        cuda_libraries_load(tmp)
    start = time.perf_counter()
    path, gmac = build_stand_in(tmp / "inswapper_stand_in.onnx", args.width, args.blocks)
    print(f"  stand-in: width {args.width}, {args.blocks} blocks, {path.stat().st_size / 1e6:.0f} MB, "
          f"{gmac:.1f} GMAC/face (built in {time.perf_counter() - start:.1f} s)")  # fmt: skip
    start = time.perf_counter()
    session = get_session(path, gpu)
    warm_up(session)
    print(
        f"  session created + warmed up in {time.perf_counter() - start:.1f} s; providers {session.get_providers()}"
    )
    if args.cpu_as_gpu:
        report.add("session runs on CUDA", "SKIP", "--cpu-as-gpu")
    else:
        report.check("session runs on CUDA", session.get_providers()[0] == CUDA,
                     f"get_providers()[0] = {session.get_providers()[0]}")  # fmt: skip
    cpu_session = get_session(path, cpu)
    feeds = stand_in_feeds(4)
    (out_gpu,) = session.run(None, feeds)
    (out_cpu,) = cpu_session.run(None, feeds)
    diff = np.abs(out_gpu.astype(np.float64) - out_cpu.astype(np.float64))
    report.check("stand-in output matches CPU (batch 4)",
                 bool(diff.max() <= 5e-2 and diff.mean() <= 1e-3),
                 f"max abs {diff.max():.2e}, mean abs {diff.mean():.2e} (limits 5e-2 / 1e-3)")  # fmt: skip

    section("3. throughput (plain session.run: host arrays in/out, device sync included)")
    gpu_batches = [1, 4, 16, 64] if not args.cpu_only_smoke else [1, 4]
    cpu_batches = [1, 4] if args.quick else [1, 4, 16, 64]
    gpu_runs = args.gpu_runs
    cpu_runs = 3 if args.quick else 5
    label = "CUDA" if not args.cpu_as_gpu else "GPU stand-in (CPU)"
    cpu_ms: dict[int, float] = {}
    for batch in cpu_batches:
        runs = cpu_runs if batch <= 4 else 2
        estimate_s = (cpu_ms[max(cpu_ms)] / max(cpu_ms) * batch * runs / 1000) if cpu_ms else 0.0
        if estimate_s > 60:
            print(f"  CPU  batch {batch:>2}: skipped (would take ~{estimate_s:.0f} s)")
            continue
        cpu_ms[batch] = median_run_s(cpu_session, stand_in_feeds(batch), runs, warm=batch <= 4) * 1000
        print(
            f"  CPU  batch {batch:>2}: {batch / cpu_ms[batch] * 1000:9.1f} faces/s  median {cpu_ms[batch]:9.2f} ms/run  ({runs} runs)"
        )
    use_binding = not args.cpu_as_gpu
    for batch in gpu_batches:
        ms = median_run_s(session, stand_in_feeds(batch), gpu_runs) * 1000
        line = f"  {label} batch {batch:>2}: {batch / ms * 1000:9.1f} faces/s  median {ms:9.2f} ms/run  ({gpu_runs} runs)"
        if batch in cpu_ms:
            line += f"  speed-up x{cpu_ms[batch] / ms:.1f}"
        if use_binding:
            try:
                bound = median_iobinding_s(session, stand_in_feeds(batch), gpu_runs, gpu.device_id) * 1000
                line += f"  | IO binding {batch / bound * 1000:9.1f} faces/s, {bound:.2f} ms"
            except Exception as exc:  # noqa: BLE001 - IO binding is optional: say why, measure without it
                line += f"  | IO binding failed: {exc!r}"
                use_binding = False
        print(line, flush=True)
    report.add("throughput measured", "PASS", f"batches {gpu_batches} on {label}, {cpu_batches} on CPU")
    del session, cpu_session


# --- 4. adapter + pipeline ---------------------------------------------------------------------------


def check_adapter(report: Report, args, gpu: RuntimeOptions, cpu: RuntimeOptions, tmp: Path) -> None:
    section(f"4. InswapperSwapper + Pipeline on {gpu.providers[0]} (tiny generated models, 1080p frame)")
    models = tmp / "models"
    fx.make_inswapper(models / "inswapper_128.onnx")
    frame = astronaut_frame()
    faces8 = synthetic_faces(8)
    source = source_identity(frame, faces8[0])
    gpu_swapper = InswapperSwapper(models / "inswapper_128.onnx", gpu, max_batch=16)
    cpu_swapper = InswapperSwapper(models / "inswapper_128.onnx", cpu, max_batch=16)
    if not args.cpu_as_gpu:
        report.check("InswapperSwapper session on CUDA", gpu_swapper.session.get_providers()[0] == CUDA,
                     f"{gpu_swapper.session.get_providers()}")  # fmt: skip
    gpu_swapper.warm_up()
    for count in (1, 8):
        faces = faces8[:count]
        start = time.perf_counter()
        out_gpu = gpu_swapper.swap(source, frame, faces)
        gpu_ms = (time.perf_counter() - start) * 1000
        out_cpu = cpu_swapper.swap(source, frame, faces)
        diff = pixel_diff(out_gpu, out_cpu)
        changed = bool((out_gpu != frame).any())
        report.check(f"swap {count} face(s) matches CPU", diff <= 1 and changed,
                     f"max pixel diff {diff}, frame changed {changed}, {gpu_ms:.1f} ms on {gpu.providers[0]}")  # fmt: skip

    from swap.config import PipelineConfig
    from swap.pipeline import Pipeline

    kps = align.template_points("arcface_128", 128) * 1.5 + np.float32([100, 60])
    rows = [dict(anchor=0, cx=196, cy=156, w=192, h=192, score=0.9, kps=kps)]
    fx.make_yoloface(models / "yoloface_8n.onnx", fx.yoloface_table(rows), score_from_input_anchor=None)
    fx.make_2dfan4(models / "2dfan4.onnx", np.random.default_rng(5).uniform(10, 54, (68, 2)), peak=0.2)
    fx.make_arcface(models / "arcface_w600k_r50.onnx")
    results = {}
    for label, options in (("gpu", gpu), ("cpu", cpu)):
        pipeline = Pipeline(PipelineConfig(models_dir=models, runtime=options, enhancer="none"))
        if label == "gpu":
            used = {
                name: getattr(getattr(pipeline, name), "session", None) for name in ("detector", "swapper")
            }
            print(
                "  pipeline backends",
                pipeline.backends,
                {k: s.get_providers()[0] for k, s in used.items() if s},
            )
        identity = pipeline.prepare_source([frame])
        pipeline.swap_frame(identity, frame, SwapOptions(faces="many"), faces=faces8)  # warm
        results[label] = (
            identity,
            pipeline.swap_frame(identity, frame, SwapOptions(faces="many"), faces=faces8),
        )
    identity, result = results["gpu"]
    report.check("Pipeline meters inference_ms > 0", result.inference_ms > 0 and identity.inference_ms > 0,
                 f"swap_frame inference_ms {result.inference_ms:.2f}, prepare_source {identity.inference_ms:.2f}, "
                 f"timings {({k: round(v, 1) for k, v in result.timings_ms.items()})}")  # fmt: skip
    diff = pixel_diff(result.image, results["cpu"][1].image)
    report.check("Pipeline 8-face frame matches CPU", diff <= 1 and len(result.faces_used) == 8,
                 f"max pixel diff {diff}, faces used {len(result.faces_used)}")  # fmt: skip
    del gpu_swapper, cpu_swapper, pipeline, results, identity, result


# --- 5. memory ----------------------------------------------------------------------------------------


def check_memory(report: Report, args, gpu: RuntimeOptions, tmp: Path, at_start: float | None) -> None:
    section("5. GPU memory (nvidia-smi memory.used, whole GPU)")
    clear_sessions()
    gc.collect()
    time.sleep(0.5)
    before = gpu_used_mib(gpu.device_id)
    if before is None:
        report.add("VRAM released", "SKIP", "nvidia-smi not available")
        return
    path = tmp / "inswapper_stand_in.onnx"
    session = get_session(path, gpu)
    session.run(None, stand_in_feeds(64))
    swapper = InswapperSwapper(tmp / "models" / "inswapper_128.onnx", gpu)
    swapper.swap(
        source_identity(astronaut_frame(), synthetic_faces(1)[0]), astronaut_frame(), synthetic_faces(8)
    )
    time.sleep(0.5)
    loaded = gpu_used_mib(gpu.device_id)
    del session, swapper
    clear_sessions()
    gc.collect()
    time.sleep(1.0)
    after = gpu_used_mib(gpu.device_id)
    print(f"  at script start (no CUDA context): {at_start} MiB")
    print(f"  before sessions (context from checks 2-4 alive): {before:.0f} MiB")
    print(f"  with stand-in (batch 64 run) + adapter sessions: {loaded:.0f} MiB  (+{loaded - before:.0f})")
    print(f"  after clear_sessions() + gc: {after:.0f} MiB  (released {loaded - after:.0f} MiB)")
    grown = loaded - before
    released = loaded - after
    if grown < 256:
        report.add(
            "VRAM released", "WARN", f"sessions grew memory.used by only {grown:.0f} MiB: nothing to judge"
        )
    elif released < 0.1 * grown:
        report.add("VRAM released", "FAIL", f"{released:.0f} of {grown:.0f} MiB released: sessions leak VRAM")
    else:
        status = "PASS" if released >= 0.8 * grown else "WARN"
        report.add("VRAM released", status, f"{released:.0f} of {grown:.0f} MiB released "
                   f"({after - before:+.0f} MiB kept vs before; CUDA context and cuDNN/cuBLAS handles stay per process)")  # fmt: skip


# --- 6. NVML --------------------------------------------------------------------------------------------


def check_nvml(report: Report, args, gpu: RuntimeOptions, tmp: Path) -> None:
    """Utilisation and memory from NVML (nvidia-ml-py, the `gpu` extra), idle and under load."""
    section("6. NVML (nvidia-ml-py): utilisation and memory")
    try:
        import pynvml
    except ImportError:
        report.add("NVML readings", "FAIL", "nvidia-ml-py is not installed (pip install 'visage[gpu]')")
        return
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        report.add("NVML readings", "FAIL", f"nvmlInit failed: {exc}")
        return
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(gpu.device_id)
        name = pynvml.nvmlDeviceGetName(handle)
        idle = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu
        session = get_session(tmp / "inswapper_stand_in.onnx", gpu)
        feeds = stand_in_feeds(16)
        busy = []
        for _ in range(max(args.gpu_runs, 10)):
            session.run(None, feeds)
            busy.append(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)
        memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
        print(f"  {name}: utilisation idle {idle} %, during batch-16 runs max {max(busy)} % "
              f"(samples {busy}); memory used {memory.used / 2**20:.0f} of {memory.total / 2**20:.0f} MiB")  # fmt: skip
        report.check(
            "NVML readings", memory.total > 0 and 0 < memory.used <= memory.total and max(busy) > 0,
            f"utilisation max {max(busy)} %, memory {memory.used / 2**20:.0f} MiB used",
        )
    finally:
        pynvml.nvmlShutdown()


# --- main -----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CPU only at batch 1 and 4; fewer runs")
    parser.add_argument("--allow-cpu", action="store_true", help="exit 0 when CUDA is not available")
    parser.add_argument(
        "--cpu-as-gpu", action="store_true", help="self-test: run checks 2-5 on the CPU provider"
    )
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--width", type=int, default=None, help="stand-in width (1024 on CUDA, 128 on CPU)")
    parser.add_argument("--blocks", type=int, default=6)
    args = parser.parse_args(argv)
    total_start = time.perf_counter()
    report = Report()
    at_start = gpu_used_mib(args.device_id)
    has_cuda = check_environment(report, args)
    args.cpu_only_smoke = args.cpu_as_gpu
    if args.width is None:
        args.width = 128 if (args.cpu_as_gpu or not has_cuda) else 1024
    args.gpu_runs = 3 if args.cpu_as_gpu else (10 if args.quick else 20)
    cpu = RuntimeOptions(providers=[CPU])
    gpu = RuntimeOptions(providers=[CPU] if args.cpu_as_gpu else [CUDA, CPU], device_id=args.device_id)

    with tempfile.TemporaryDirectory(prefix="gpu_check_") as tmp_name:
        tmp = Path(tmp_name)
        if has_cuda:
            check_stand_in(report, args, gpu, cpu, tmp)
            check_adapter(report, args, gpu, cpu, tmp)
            if args.cpu_as_gpu:
                report.add("VRAM released", "SKIP", "--cpu-as-gpu")
                report.add("NVML readings", "SKIP", "--cpu-as-gpu")
            else:
                check_nvml(report, args, gpu, tmp)
                check_memory(report, args, gpu, tmp, at_start)
        else:
            print(f"\n{SKIP_LINE}")
            section("CPU smoke test (stand-in throughput + adapter on CPU)")
            path, gmac = build_stand_in(tmp / "inswapper_stand_in.onnx", args.width, args.blocks)
            session = get_session(path, cpu)
            warm_up(session)
            for batch in (1, 4):
                ms = median_run_s(session, stand_in_feeds(batch), 3) * 1000
                print(f"  CPU batch {batch}: {batch / ms * 1000:8.1f} faces/s  median {ms:8.2f} ms/run "
                      f"(width {args.width}, {gmac:.2f} GMAC/face, 3 runs)")  # fmt: skip
            fx.make_inswapper(tmp / "inswapper_128.onnx")
            frame = astronaut_frame()
            faces = synthetic_faces(8)
            swapper = InswapperSwapper(tmp / "inswapper_128.onnx", cpu)
            out = swapper.swap(source_identity(frame, faces[0]), frame, faces)
            report.check(
                "CPU adapter smoke (8 faces, 1080p)", out.shape == frame.shape and bool((out != frame).any())
            )
        clear_sessions()

    section("summary")
    elapsed = time.perf_counter() - total_start
    counts = {s: sum(1 for _, st, _ in report.results if st == s) for s in ("PASS", "FAIL", "WARN", "SKIP")}
    print(f"  {counts['PASS']} passed, {counts['FAIL']} failed, {counts['WARN']} warnings, {counts['SKIP']} skipped"
          f" in {elapsed:.1f} s")  # fmt: skip
    if report.failed:
        print(f"  FAILED: {', '.join(report.failed)}")
        return 1
    if not has_cuda and not args.allow_cpu:
        print(f"  {SKIP_LINE}; exit 2 (pass --allow-cpu on a machine without a GPU)")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
