"""Servers a test starts as processes of their own (granian, prometheus, alertmanager): each in
its own session so that stopping it takes its children too."""

from __future__ import annotations

import os
import signal
import subprocess


def start(args: list[str], env: dict, log) -> subprocess.Popen:
    return subprocess.Popen(args, env=env, start_new_session=True, stdout=log, stderr=subprocess.STDOUT)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def alive(processes: list[subprocess.Popen], log_path) -> bool:
    for process in processes:
        assert process.poll() is None, f"{process.args[:3]} exited: {log_path.read_text()[-3000:]}"
    return True
