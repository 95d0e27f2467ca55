"""The `triton` image really serves: built with Podman, started as compose and Kubernetes start it
(its `triton` role, read-only root, models on a read-only volume), it binds the stand-in models,
and the engine's adapters get bit-identical results through it and locally; Triton's metrics port
counts the requests; SIGTERM stops it cleanly.

This machine has no GPU: the image's onnxruntime-gpu runs on its CPU provider here; on a GPU
node the same image runs the models on CUDA (bench/gpu_check.py).

Marked `container` (excluded from `make test`; `.ci/run` runs `pytest -m container`).
"""

from __future__ import annotations

import time
import urllib.request
from types import SimpleNamespace

import numpy as np
import pytest

from swap.inference import triton_client
from swap.inference.sessions import clear_sessions
from swap.serve import launcher
from tests.helpers.podman import free_port, make_images, podman
from tests.helpers.standin_inputs import face_at, identity, textured_frame
from tests.helpers.triton_models import EMBEDDING, both, write_models

# A cold build adds PyTriton to the GPU worker's dependency layers (CUDA wheels): minutes on 2 cores.
pytestmark = [pytest.mark.container, pytest.mark.timeout(3600)]

READY_S = 300  # Triton binding the stand-in models on 2 shared cores: bounds a stuck start


@pytest.fixture(scope="module")
def image() -> str:
    return make_images("triton")["triton"]


@pytest.fixture(scope="module")
def served(image, tmp_path_factory):
    models_dir = tmp_path_factory.mktemp("triton-models")
    write_models(models_dir)
    for path in [models_dir, *models_dir.rglob("*")]:  # the image's user 10001 reads them
        path.chmod(0o755 if path.is_dir() else 0o644)
    http, grpc, metrics = free_port(), free_port(), free_port()
    name = f"visage-triton-test-{http}"
    podman(
        "run", "-d", "--name", name, "--network", "host", "--read-only", "--tmpfs", "/tmp",
        "--tmpfs", "/data", "-v", f"{models_dir}:/models:ro",
        image, "triton", "--http-port", str(http), "--grpc-port", str(grpc), "--metrics-port", str(metrics),
    )
    try:
        deadline = time.monotonic() + READY_S
        while not launcher.triton_ready(f"http://127.0.0.1:{http}"):
            state = podman("inspect", "-f", "{{.State.Running}}", name).stdout.strip()
            if state != "true" or time.monotonic() > deadline:
                pytest.fail(f"Triton did not become ready (running={state}); log:\n{logs(name)}")
            time.sleep(1)
        yield SimpleNamespace(
            name=name, models_dir=models_dir, grpc_url=f"grpc://127.0.0.1:{grpc}",
            metrics_url=f"http://127.0.0.1:{metrics}/metrics",
        )
    finally:
        podman("rm", "-f", "-t", "0", name, check=False)
        triton_client.clear()


def logs(name: str) -> str:
    return "\n".join(podman("logs", name, check=False).stdout.splitlines()[-40:])


def test_the_image_serves_the_models_like_local_inference_and_stops_on_sigterm(served):
    clear_sessions()
    triton_client.clear()
    local, remote = both(served.models_dir, served, "inswapper_128")
    frame = textured_frame()
    faces = [face_at("arcface_128", 128, x, y) for x, y in [(10, 10), (180, 20)]]
    expected = local.swap(identity(EMBEDDING), frame, faces)
    np.testing.assert_array_equal(remote.swap(identity(EMBEDDING), frame, faces), expected)
    assert not np.array_equal(expected, frame)  # the stand-in swapper changed the faces

    local, remote = both(served.models_dir, served, "arcface_w600k_r50")
    faces112 = [face_at("arcface_112_v2", 112, 5, 5)]
    np.testing.assert_array_equal(local.embed(frame, faces112)[0], remote.embed(frame, faces112)[0])

    # Readiness as the web's /healthz reports it: the served versions; the version that is not an
    # ONNX file was left out of the generated repository (the good one serves); the model that
    # parses but cannot load is reported by name.
    report = triton_client.readiness(served.grpc_url)
    assert report["ready"] and report["models"]["inswapper_128"]["versions"] == [1, 2]
    assert report["models"]["arcface_w600k_r50"]["versions"] == [1]
    assert any(line.startswith("crossface_ghost v1: ") for line in report["failed"]), report["failed"]

    # Triton's own metrics port (what the PodMonitor / compose Prometheus scrape) counted the work.
    with urllib.request.urlopen(served.metrics_url, timeout=5) as response:
        metrics = response.read().decode()
    swaps = [
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("nv_inference_request_success{") and 'model="inswapper_128' in line
    ]
    assert sum(swaps) >= 1, metrics[:2000]

    # compose and Kubernetes stop the container with SIGTERM: the serve command forwards it to
    # Triton, which drains and exits; the container exits 0 within the grace period.
    podman("stop", "-t", "60", served.name)
    code = podman("inspect", "-f", "{{.State.ExitCode}}", served.name).stdout.strip()
    assert code == "0", logs(served.name)
