"""`python -m swap serve`: the Triton venv, the serve plan, and the Triton process.

Triton runs in its own venv (default var/triton-venv) built from Debian's /usr/bin/python3:
PyTriton's Python-backend stub loads a libpython that must match the interpreter's stdlib, and
the pyenv CPython 3.11.7 build fails there ('_thread.RLock' object has no attribute
'_recursion_count'); Debian's 3.11.2 works. VISAGE_TRITON_PYTHON names another interpreter.

Settings (environment, read here only; the webapp passes the same names through):
VISAGE_TRITON_MAX_BATCH (16), VISAGE_TRITON_PREFERRED_BATCH ("4,8,16"),
VISAGE_TRITON_QUEUE_DELAY_US (5000), VISAGE_TRITON_BATCHING (1; 0 = one request per run).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from swap.inference.emap import read_emap
from swap.models import registry, versions

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VENV = Path("var/triton-venv")
DEFAULT_PYTHON = "/usr/bin/python3"
SERVER_PACKAGES = ("nvidia-pytriton>=0.5", "numpy")
ONNXRUNTIME_CPU, ONNXRUNTIME_GPU = "onnxruntime", "onnxruntime-gpu"


class ServeError(Exception):
    """Triton cannot be set up or started here (one-line reason)."""


# -- the Triton venv -----------------------------------------------------------------------------


def venv_python(venv: Path = DEFAULT_VENV) -> Path:
    return Path(venv) / "bin" / "python"


def venv_ready(venv: Path = DEFAULT_VENV) -> bool:
    python = venv_python(venv)
    if not python.exists():
        return False
    probe = "import pytriton.triton, onnxruntime, numpy"
    return subprocess.run([str(python), "-c", probe], capture_output=True, timeout=120).returncode == 0


def ensure_venv(venv: Path = DEFAULT_VENV, *, python: str | None = None, gpu: bool = False) -> Path:
    """Create the Triton venv and install PyTriton + onnxruntime into it (idempotent)."""
    venv = Path(venv)
    if venv_ready(venv):
        return venv_python(venv)
    interpreter = python or os.environ.get("VISAGE_TRITON_PYTHON") or DEFAULT_PYTHON
    if not Path(interpreter).exists():
        raise ServeError(
            f"{interpreter} is missing: Triton's venv needs Debian's python3 (apt-get install python3-venv)"
        )
    made = subprocess.run([interpreter, "-m", "venv", str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        raise ServeError(f"cannot create {venv} with {interpreter}: {made.stderr.strip().splitlines()[-1:]}")
    runtime = ONNXRUNTIME_GPU if gpu else ONNXRUNTIME_CPU
    pip = [str(venv_python(venv)), "-m", "pip", "install", "--quiet", *SERVER_PACKAGES, runtime]
    installed = subprocess.run(pip, capture_output=True, text=True)
    if installed.returncode != 0:
        tail = (installed.stderr or installed.stdout).strip().splitlines()[-1:]
        raise ServeError(f"installing PyTriton into {venv} failed: {tail}")
    return venv_python(venv)


# -- the serve plan -------------------------------------------------------------------------------


def triton_name(name: str) -> str:
    """Triton model names are directory names; keep them plain (gfpgan_1.4 → gfpgan_1_4)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def _int_env(env: dict, key: str, default: int) -> int:
    value = env.get(key, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        raise ServeError(f"{key} must be an integer, got {value!r}") from None


@dataclass
class BatchingSettings:
    batching: bool = True
    max_batch_size: int = 16
    preferred_batch_sizes: list[int] = field(default_factory=lambda: [4, 8, 16])
    max_queue_delay_us: int = 5000

    @classmethod
    def from_env(cls, environ: dict | None = None) -> BatchingSettings:
        env = os.environ if environ is None else environ
        preferred = env.get("VISAGE_TRITON_PREFERRED_BATCH", "").strip()
        settings = cls(
            batching=env.get("VISAGE_TRITON_BATCHING", "1").strip().lower()
            not in ("0", "false", "no", "off"),
            max_batch_size=_int_env(env, "VISAGE_TRITON_MAX_BATCH", 16),
            max_queue_delay_us=_int_env(env, "VISAGE_TRITON_QUEUE_DELAY_US", 5000),
        )
        if preferred:
            settings.preferred_batch_sizes = [int(p) for p in preferred.split(",") if p.strip()]
        settings.preferred_batch_sizes = [
            p for p in settings.preferred_batch_sizes if p <= settings.max_batch_size
        ]
        return settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_plan(
    models_dir: Path,
    work_dir: Path,
    *,
    names: list[str] | None = None,
    batching: BatchingSettings | None = None,
    ports: tuple[int, int, int] = (8000, 8001, 8002),
    device_id: int = 0,
    intra_op_threads: int = 0,
) -> dict:
    """Every installed version of every (or each named) manifest model, with its batching."""
    batching = batching or BatchingSettings.from_env()
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    models = []
    for spec in registry.manifest().values():
        if names is not None and spec.name not in names:
            continue
        installed = versions.installed_versions(spec.name, models_dir)
        if not installed:
            if names is not None:
                raise ServeError(f"{spec.name} is not installed in {models_dir}")
            continue
        entries = []
        for version in installed:
            path = versions.version_path(spec.name, version, models_dir)
            entry = {"version": version, "path": str(path.resolve())}
            if spec.adapter == "inswapper":
                emap_file = work_dir / f"{triton_name(spec.name)}.{version}.emap.npy"
                np.save(emap_file, read_emap(path))
                entry["emap"] = str(emap_file.resolve())
            entries.append(entry)
        models.append(
            {
                "name": spec.name,
                "triton_name": triton_name(spec.name),
                "kind": spec.kind,
                "versions": entries,
                "stable": versions.stable_version(spec.name, models_dir),
                "batching": batching.batching,
                "max_batch_size": batching.max_batch_size,
                "preferred_batch_sizes": batching.preferred_batch_sizes,
                "max_queue_delay_us": batching.max_queue_delay_us,
            }
        )
    http_port, grpc_port, metrics_port = ports
    return {
        "models_dir": str(Path(models_dir).resolve()),
        "models": models,
        "http_port": http_port,
        "grpc_port": grpc_port,
        "metrics_port": metrics_port,
        "device_id": device_id,
        "intra_op_threads": intra_op_threads,
        "providers": ["CUDAExecutionProvider", "CPUExecutionProvider"],
    }


# -- the process ---------------------------------------------------------------------------------


def triton_ready(http_url: str) -> bool:
    """Triton at `http_url` is up and has bound every model (the catalog is bound last, see
    server.py); the `triton` image's health check asks the same."""
    try:
        with urllib.request.urlopen(f"{http_url}/v2/models/visage_catalog/ready", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@dataclass
class TritonProcess:
    process: subprocess.Popen
    plan: dict
    log_path: Path | None  # None: Triton writes to this process's stdout

    @property
    def grpc_url(self) -> str:
        return f"grpc://127.0.0.1:{self.plan['grpc_port']}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.plan['http_port']}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.plan['metrics_port']}/metrics"

    def ready(self) -> bool:
        return triton_ready(self.http_url)

    def wait_ready(self, timeout_s: float = 180.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServeError(f"Triton exited with {self.process.returncode}; log: {self.log_tail()}")
            if self.ready():
                return
            time.sleep(0.5)
        raise ServeError(f"Triton not ready after {timeout_s:.0f} s; log: {self.log_tail()}")

    def log_tail(self, lines: int = 15) -> str:
        if self.log_path is None:
            return "(in the output above)"
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, timeout_s: float = 30.0) -> None:
        if self.process.poll() is None:
            # SIGINT: PyTriton's own shutdown (Triton drains in-flight requests, exit_timeout_s).
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                pass
        # Triton and its Python-backend stubs run in the server's process group: nothing outlives it.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout_s)


def start(
    plan: dict, *, venv: Path = DEFAULT_VENV, work_dir: Path, log_file: Path | None = None
) -> TritonProcess:
    """Start Triton (in the background) on `plan`; call `wait_ready()` before sending work.

    Its output goes to `log_file` (default <work_dir>/triton.log), or to this process's own
    stdout/stderr when `log_file` is "-" (a container's log)."""
    python = venv_python(venv)
    if not python.exists():
        raise ServeError(f"no Triton venv at {venv}; create it with: python -m swap serve --setup")
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    plan_path = work_dir / "plan.json"
    plan_path.write_text(json.dumps(plan, indent=2))
    to_stdout = str(log_file) == "-"
    log_path = None if to_stdout else Path(log_file or work_dir / "triton.log")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    env.pop("PYTHONHOME", None)
    command = [str(python), "-m", "swap.serve.server", "--plan", str(plan_path)]
    if to_stdout:
        process = subprocess.Popen(command, cwd=str(REPO_ROOT), env=env, start_new_session=True)
    else:
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                command,
                cwd=str(REPO_ROOT),
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
    return TritonProcess(process=process, plan=plan, log_path=log_path)


# -- `python -m swap serve` -----------------------------------------------------------------------


def add_subparser(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="run the models in Triton Inference Server (dynamic batching)"
    )
    parser.add_argument("--models-dir", type=Path, default=None, help="where model files live")
    parser.add_argument("--models", default=None, help="comma-separated model names (default: all installed)")
    parser.add_argument("--http-port", type=int, default=8000)
    parser.add_argument("--grpc-port", type=int, default=8001)
    parser.add_argument("--metrics-port", type=int, default=8002, help="Triton's Prometheus metrics")
    parser.add_argument("--device-id", type=int, default=0, help="GPU of this Triton (one process per GPU)")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="Triton's own venv")
    parser.add_argument("--gpu", action="store_true", help="install onnxruntime-gpu into the Triton venv")
    parser.add_argument("--setup", action="store_true", help="only create the Triton venv, then exit")
    parser.add_argument("--work-dir", type=Path, default=Path("var/triton"))
    parser.add_argument(
        "--log-file", default=None, help="Triton's log (default <work-dir>/triton.log; - for stdout)"
    )
    parser.set_defaults(func=_serve)


def _serve(args) -> int:
    # SIGTERM/SIGINT stop Triton too (compose/Kubernetes stop the container this way), also while it
    # is still starting: the handlers are in place before Triton is, so a stop during its start-up
    # cannot leave it serving with no parent. Triton runs in its own process group (so a stop reaches
    # its Python-backend stubs); the handler only forwards the signal: waiting inside it would
    # contend with the waits below.
    triton: TritonProcess | None = None
    stopping: list[int] = []

    def _stop(signum, frame):
        stopping.append(signum)
        if triton is not None:
            triton.process.send_signal(signal.SIGINT)

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        ensure_venv(args.venv, gpu=args.gpu)
        if args.setup:
            print(f"Triton venv ready: {venv_python(args.venv)}")
            return 0
        names = [n.strip() for n in args.models.split(",")] if args.models else None
        plan = build_plan(
            args.models_dir or registry.default_models_dir(),
            args.work_dir,
            names=names,
            ports=(args.http_port, args.grpc_port, args.metrics_port),
            device_id=args.device_id,
        )
        if not plan["models"]:
            raise ServeError("no installed models to serve (python -m swap models list)")
        if stopping:
            return 0
        triton = start(plan, venv=args.venv, work_dir=args.work_dir, log_file=args.log_file)
        if stopping:  # the signal came while start() ran, before `triton` was set
            triton.process.send_signal(signal.SIGINT)
        triton.wait_ready()
    except ServeError as exc:
        if triton is not None:
            triton.stop()
        if stopping:
            return 0
        print(f"error: {exc}", file=sys.stderr)
        return 1
    served = ", ".join(
        f"{m['name']} v{'/'.join(str(v['version']) for v in m['versions'])}" for m in plan["models"]
    )
    print(
        f"Triton ready: {triton.grpc_url} (HTTP {triton.http_url}, metrics {triton.metrics_url}); {served}",
        flush=True,
    )
    try:
        code = triton.process.wait()
    finally:
        triton.stop()
    return 0 if stopping else code
