"""`visage_run` as an operator meets it when things go wrong: the site's port taken, the web server
dying, an embedded server killed, a stop while it starts, the supervisor itself killed. Nothing may
be left running, and a failure must exit non-zero."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import redis
from django.core.management import call_command
from django.core.management.base import CommandError

from swap import config as swap_config
from webapp.jobs import readiness
from webapp.ops import embedded
from webapp.ops.management.commands import visage_run

REPO = Path(__file__).resolve().parents[3]
HANG_GUARD_S = 120


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_gone(pids: list[int]) -> list[int]:
    """The pids still running after the hang guard (none, when all went)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while time.monotonic() < deadline and not all(gone(pid) for pid in pids):
        time.sleep(0.2)
    return [pid for pid in pids if not gone(pid)]


def test_a_taken_site_port_is_refused_before_anything_starts(tmp_path, settings):
    """It was found only once every worker had loaded its models, then the command exited 0."""
    settings.DATA_DIR = tmp_path / "data"
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        with pytest.raises(CommandError, match=f"port {port} .* is already in use by pid {os.getpid()}"):
            call_command("visage_run", addr=f"127.0.0.1:{port}")
    assert not (tmp_path / "data" / "redis").exists()  # nothing was started


def test_a_web_server_that_dies_ends_the_run_with_its_status(monkeypatch, settings):
    """The supervisor stopped everything and returned normally: `visage_run` exited 0."""
    monkeypatch.setattr(readiness, "all_ready", lambda: True)
    monkeypatch.setattr(visage_run, "web_server_command", lambda host, port: [sys.executable, "-c", "raise SystemExit(3)"])
    spawned = []
    real_spawn = visage_run._spawn

    def stand_ins(command):  # the workers and the scheduler: processes that wait to be stopped
        process = real_spawn(command if "SystemExit(3)" in command[-1] else ["sleep", "60"])
        spawned.append(process.pid)
        return process

    monkeypatch.setattr(visage_run, "_spawn", stand_ins)
    settings.MODERATION_WORKERS = 1
    assert visage_run.Command()._supervise("127.0.0.1:9", {}, []) == 3
    assert wait_gone(spawned) == []


def test_a_killed_embedded_redis_is_started_again_on_its_port_and_data(tmp_path, settings):
    """Nothing noticed: every worker failed to connect and was restarted, for ever."""
    settings.DATA_DIR = tmp_path / "data"
    server = embedded.start_redis(settings.DATA_DIR / "redis")
    try:
        with redis.Redis.from_url(server.url) as client:
            client.set("kept", "yes")
        server.process.kill()
        server.process.wait()
        again = visage_run.Command()._restart_server(server)
        try:
            assert again.port == server.port and again.process.pid != server.process.pid
            with redis.Redis.from_url(again.url) as client:
                assert client.get("kept") == b"yes"  # appendonly: its data came back with it
        finally:
            again.stop()
    finally:
        server.stop()


def test_stopping_a_process_stops_its_whole_group(tmp_path):
    """The web server's main process killed: its workers kept the port, and nothing stopped them."""
    child_file = tmp_path / "child"
    process = visage_run._spawn(["sh", "-c", f"sleep 60 & echo $! > {child_file}; wait"])
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        while not (child_file.exists() and child_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(child_file.read_text())
        os.kill(process.pid, signal.SIGKILL)  # only the main process
        process.wait()
        assert not gone(child)
        visage_run._stop(process)
        assert wait_gone([child]) == []
    finally:
        visage_run._stop(process)


def test_what_the_supervisor_starts_ends_when_it_is_killed(tmp_path):
    """kill -9 of the supervisor (the OOM killer, a crashed terminal) left every server and worker
    running, holding their ports."""
    script = (
        "import sys, time\n"
        "import django\n"
        "django.setup()\n"
        "from webapp.ops import embedded\n"
        "from webapp.ops.management.commands import visage_run\n"
        f"server = embedded.start_redis(__import__('pathlib').Path({str(tmp_path / 'redis')!r}), persist=False)\n"
        "worker = visage_run._spawn(['sleep', '60'])\n"
        "print(server.process.pid, worker.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    supervisor = subprocess.Popen(
        [sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings", "VISAGE_DATA_DIR": str(tmp_path / "data")},
    )
    children: list[int] = []
    try:
        children = [int(pid) for pid in supervisor.stdout.readline().split()]
        assert len(children) == 2 and not any(gone(pid) for pid in children)
        supervisor.kill()
        supervisor.wait()
        assert wait_gone(children) == []
    finally:
        supervisor.kill()
        for pid in children:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_stop_while_starting_stops_what_was_started(tmp_path):
    """SIGTERM before the supervisor's own handlers (migrating, making the examples) ended the
    process by default: the embedded Redis and S3 servers were left running."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("REDIS_URL", "S3_ENDPOINT", "DATABASE_URL", "PROMETHEUS_MULTIPROC_DIR")}
    env.update(VISAGE_DATA_DIR=str(tmp_path / "data"), DJANGO_SETTINGS_MODULE="webapp.settings")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run = subprocess.Popen(
        [sys.executable, "manage.py", "visage_run", "--addr", f"127.0.0.1:{port}"], cwd=REPO, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    servers = []
    try:
        for line in run.stdout:
            if line.startswith(("redis: started", "s3: started")):
                servers.append(int(line.rsplit("(pid ", 1)[1].rstrip(")\n")))
            if line.startswith("s3: started"):
                break
        assert len(servers) == 2, servers
        run.send_signal(signal.SIGTERM)
        run.wait(HANG_GUARD_S)
        assert run.returncode != 0
        assert wait_gone(servers) == []
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
        for pid in servers:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_data_dir_that_cannot_be_written_is_one_message(tmp_path, settings):
    (tmp_path / "a-file").write_text("not a folder")
    settings.DATA_DIR = tmp_path / "a-file" / "data"
    with pytest.raises(CommandError, match="cannot write into VISAGE_DATA_DIR"):
        visage_run.Command()._lock_data_dir()


def test_gpu_queue_workers_one_per_gpu_and_at_least_two_on_the_cpu(monkeypatch, settings):
    """On the CPU the swap is metered by CPU time, which a second worker beside it leaves alone, and one
    worker sat idle between a burst's jobs; a GPU's calls are metered by wall time: one per GPU."""
    settings.GPU_WORKERS, settings.MODERATION_WORKERS = 0, 1
    monkeypatch.setattr(swap_config, "available_providers", lambda: ["CPUExecutionProvider"])
    assert visage_run.gpu_worker_count() == 2
    settings.MODERATION_WORKERS = 4
    assert visage_run.gpu_worker_count() == 4
    monkeypatch.setattr(swap_config, "available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert visage_run.gpu_worker_count() == 1
    settings.GPU_WORKERS = 3  # the operator's count wins
    assert visage_run.gpu_worker_count() == 3


def test_the_supervisor_starts_the_gpu_queue_workers_it_counts(monkeypatch, settings):
    monkeypatch.setattr(readiness, "all_ready", lambda: True)
    monkeypatch.setattr(visage_run, "web_server_command", lambda host, port: [sys.executable, "-c", "raise SystemExit(3)"])
    commands = []
    real_spawn = visage_run._spawn

    spawned = []

    def stand_ins(command):
        commands.append(command)
        process = real_spawn(command if "SystemExit(3)" in command[-1] else ["sleep", "60"])
        spawned.append(process.pid)
        return process

    monkeypatch.setattr(visage_run, "_spawn", stand_ins)
    settings.MODERATION_WORKERS, settings.GPU_WORKERS = 1, 2
    assert visage_run.Command()._supervise("127.0.0.1:9", {}, []) == 3
    assert wait_gone(spawned) == []
    queues = [command[command.index("--queues") + 1] for command in commands if "--queues" in command]
    gpu = ",".join(settings.GPU_QUEUES)
    assert sorted(queues) == sorted([settings.MODERATION_QUEUE, settings.WEBHOOK_QUEUE, gpu, gpu])
