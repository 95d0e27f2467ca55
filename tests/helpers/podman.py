"""Visage's images built and run with Podman for the `container` tests: `make images`, the podman
CLI, free host ports, and waiting for the web container's health check."""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]
TAG = "container-test"
PODMAN = shlex.split(os.environ.get("PODMAN", "podman"))
POLLS = 600  # job status polls, 1 s apart: bounds a stuck run, not a speed expectation


def unavailable(reason: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (required under CI=true)")
    pytest.skip(reason)


def podman(*args: str, check: bool = True, capture: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([*PODMAN, *args], check=check, capture_output=capture, text=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_images(*targets: str) -> dict[str, str]:
    """`make images` for these targets (the container tests' tag): {target: image name}."""
    if shutil.which(PODMAN[0]) is None:
        unavailable("podman is not installed (deploy/podman-host-setup.sh installs it on Debian)")
    started = time.monotonic()
    subprocess.run(
        [
            "make",
            "images",
            f"IMAGE_TARGETS={' '.join(targets)}",
            f"IMAGE_TAG={TAG}",
            f"PODMAN={' '.join(PODMAN)}",
        ],
        cwd=REPO,
        check=True,
    )
    print(f"make images ({', '.join(targets)}): {time.monotonic() - started:.0f} s")
    return {target: f"localhost/visage-{target}:{TAG}" for target in targets}


def wait_until_healthy(base_url: str, container: str) -> None:
    for _ in range(120):
        try:
            if requests.get(f"{base_url}/healthz", timeout=60).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):
            pass
        state = podman("inspect", "-f", "{{.State.Status}}", container, check=False).stdout.strip()
        assert state == "running", (
            f"{container} exited: {podman('logs', container, check=False).stderr[-3000:]}"
        )
        time.sleep(1)
    pytest.fail(f"{container} never answered /healthz")
