"""`python -m swap serve`: the Triton venv, the serve plan, and the Triton process.

Triton runs in its own venv (default var/triton-venv) built from Debian's /usr/bin/python3:
PyTriton's Python-backend stub loads a libpython that must match the interpreter's stdlib, and
the pyenv CPython 3.11.7 build fails there ('_thread.RLock' object has no attribute
'_recursion_count'); Debian's 3.11.2 works. VISAGE_TRITON_PYTHON names another interpreter.

It serves the standard model repository (swap.models.repository) with the Python backend running
each version's model.onnx (swap.serve.server) on PyTriton's tritonserver binary: NVIDIA's Triton
image serves the ONNX Runtime variant of the same layout. Batching settings: see
`swap.models.repository.BatchingSettings` (VISAGE_TRITON_MAX_BATCH, _PREFERRED_BATCH,
_QUEUE_DELAY_US, _BATCHING).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from swap.models import registry
from swap.models.repository import (
    BatchingSettings,
    RepositoryError,
    RepositoryOptions,
    triton_name,
    write_repository,
)

__all__ = ["BatchingSettings", "ServeError", "TritonProcess", "build_repository", "start", "triton_name"]

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


# -- the repository it serves ---------------------------------------------------------------------

SERVER_MODEL = Path(__file__).with_name("server.py")  # the Python-backend model.py of every version


def build_repository(
    models_dir: Path,
    work_dir: Path,
    *,
    names: list[str] | None = None,
    batching: BatchingSettings | None = None,
) -> dict[str, list[int]]:
    """<work_dir>/repository: the standard repository (swap.models.repository) with the Python
    backend running each version's model.onnx; {model: versions} written."""
    target = Path(work_dir) / "repository"
    if target.exists():
        shutil.rmtree(target)  # models uninstalled since the last start must not be served
    options = RepositoryOptions(
        batching=batching or BatchingSettings.from_env(), backend="python", python_model=SERVER_MODEL
    )
    skipped: list[str] = []
    try:
        written = write_repository(models_dir, target, options, names=names, skipped=skipped)
    except RepositoryError as exc:
        raise ServeError(str(exc)) from None
    for line in skipped:
        print(f"warning: {line}", file=sys.stderr)
    return written


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- the process ---------------------------------------------------------------------------------


def triton_ready(http_url: str) -> bool:
    """Triton at `http_url` answers and has loaded its repository (it listens only after loading,
    and --strict-readiness=false: a version that failed to load is reported, not fatal). The
    `triton` image's health check asks the same standard endpoint."""
    try:
        with urllib.request.urlopen(f"{http_url}/v2/health/ready", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@dataclass
class TritonProcess:
    process: subprocess.Popen
    plan: dict  # http_port, grpc_port, metrics_port, models ({name: versions})
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

    def wait_ready(self, timeout_s: float = 180.0, *, stop_requested=lambda: False) -> None:
        """Until Triton answers ready; returns early once `stop_requested()` (the caller stops it)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if stop_requested():
                return
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
            # SIGINT: Triton's own shutdown (drains in-flight requests for --exit-timeout-secs).
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


def _server_files(venv: Path, work_dir: Path) -> tuple[Path, Path, Path]:
    """(tritonserver binary, backend directory, its libraries) from PyTriton's distribution in the
    venv: the Python backend with the stub built for the venv's Python version."""
    python = venv_python(venv)
    probe = (
        "import pathlib, sys, pytriton; root = pathlib.Path(pytriton.__file__).parent; "
        "print(root); print(f'{sys.version_info[0]}.{sys.version_info[1]}')"
    )
    found = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=120)
    if found.returncode != 0:
        raise ServeError(f"PyTriton is not importable in {venv}: {found.stderr.strip().splitlines()[-1:]}")
    root_text, python_version = found.stdout.split()
    root = Path(root_text) / "tritonserver"
    backends = Path(work_dir) / "backends"
    python_backend = backends / "python"
    python_backend.mkdir(parents=True, exist_ok=True)
    links = {
        "libtriton_python.so": root / "backends" / "python" / "libtriton_python.so",
        "triton_python_backend_utils.py": root / "backends" / "python" / "triton_python_backend_utils.py",
        "triton_python_backend_stub": root
        / "python_backend_stubs"
        / python_version
        / "triton_python_backend_stub",
    }
    for name, source in links.items():
        link = python_backend / name
        link.unlink(missing_ok=True)
        link.symlink_to(source)
    return root / "bin" / "tritonserver", backends, root.parent.parent / "nvidia_pytriton.libs"


def start(
    repository: Path,
    *,
    venv: Path = DEFAULT_VENV,
    work_dir: Path,
    ports: tuple[int, int, int] = (8000, 8001, 8002),
    models: dict[str, list[int]] | None = None,
    log_file: Path | None = None,
    device_id: int = 0,
    intra_op_threads: int = 0,
    bind_address: str = "0.0.0.0",
) -> TritonProcess:
    """Start PyTriton's tritonserver (in the background) on `repository`; call `wait_ready()`
    before sending work.

    Its output goes to `log_file` (default <work_dir>/triton.log), or to this process's own
    stdout/stderr when `log_file` is "-" (a container's log)."""
    if not venv_python(venv).exists():
        raise ServeError(f"no Triton venv at {venv}; create it with: python -m swap serve --setup")
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    binary, backends, libs = _server_files(venv, work_dir)
    http_port, grpc_port, metrics_port = ports
    command = [
        str(binary), f"--model-repository={Path(repository).resolve()}", f"--backend-directory={backends}",
        f"--http-port={http_port}", f"--grpc-port={grpc_port}", f"--metrics-port={metrics_port}",
        f"--http-address={bind_address}", f"--grpc-address={bind_address}", f"--metrics-address={bind_address}",
        # A version that fails to load is reported (repository index), the others serve.
        "--exit-on-error=false", "--strict-readiness=false", "--exit-timeout-secs=5", "--log-verbose=0",
        # Python-backend shared memory is named per server: several stand-ins on one host.
        f"--backend-config=python,shm-region-prefix-name=visage{os.getpid()}_{grpc_port}_",
    ]  # fmt: skip
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(libs), env.get("LD_LIBRARY_PATH", "")]))
    env["PATH"] = os.pathsep.join([str(Path(venv).resolve() / "bin"), env.get("PATH", "")])
    env["VISAGE_TRITON_DEVICE_ID"] = str(device_id)
    env["VISAGE_TRITON_INTRA_OP_THREADS"] = str(intra_op_threads)
    env.pop("PYTHONHOME", None)
    env.pop("PYTHONPATH", None)
    to_stdout = str(log_file) == "-"
    log_path = None if to_stdout else Path(log_file or work_dir / "triton.log")
    if to_stdout:
        process = subprocess.Popen(command, env=env, start_new_session=True)
    else:
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
    plan = {
        "http_port": http_port,
        "grpc_port": grpc_port,
        "metrics_port": metrics_port,
        "models": models or {},
    }
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
    parser.add_argument(
        "--bind-address", default="0.0.0.0", help="address Triton listens on (visage_run: 127.0.0.1)"
    )
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
        models = build_repository(
            args.models_dir or registry.default_models_dir(), args.work_dir, names=names
        )
        if stopping:
            return 0
        triton = start(
            args.work_dir / "repository",
            venv=args.venv,
            work_dir=args.work_dir,
            ports=(args.http_port, args.grpc_port, args.metrics_port),
            models=models,
            log_file=args.log_file,
            device_id=args.device_id,
            bind_address=args.bind_address,
        )
        triton.wait_ready(stop_requested=lambda: bool(stopping))
        if stopping:
            # A stop during start-up: Triton may take a SIGINT that comes while it loads its models
            # only once they are loaded, or not at all (it then served on with its parent waiting
            # for it: seen in a CI run). stop() asks, waits, then kills its process group.
            triton.stop()
            return 0
    except ServeError as exc:
        if triton is not None:
            triton.stop()
        if stopping:
            return 0
        print(f"error: {exc}", file=sys.stderr)
        return 1
    served = ", ".join(f"{name} v{'/'.join(map(str, found))}" for name, found in models.items())
    print(
        f"Triton ready: {triton.grpc_url} (HTTP {triton.http_url}, metrics {triton.metrics_url}); {served}",
        flush=True,
    )
    try:
        code = triton.process.wait()
    finally:
        triton.stop()
    return 0 if stopping else code
