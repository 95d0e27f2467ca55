"""VISAGE_INFERENCE=triton against a real Triton (PyTriton's tritonserver) on the stand-in models.

Triton runs in its own venv (var/triton-venv, Debian's /usr/bin/python3; see swap.serve.launcher).
Locally these tests skip when that venv is missing (create it: `make triton-venv`, ~4 min);
under CI=true the venv is created (measured ~4 minutes on a 2-core machine) and a failure fails.

Every adapter must give bit-identical output through Triton and locally: the adapters keep
their own pre/post-processing and the same model file runs in the same onnxruntime.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import urllib.request
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from swap.config import PipelineConfig
from swap.errors import InferenceUnavailable
from swap.inference import triton_client
from swap.inference.sessions import clear_sessions
from swap.models import canary, registry, versions
from swap.pipeline import Pipeline
from swap.serve import launcher
from swap.types import SwapOptions
from tests.helpers.standin_inputs import (
    CPU,
    LATENT_0,
    enhancer_frame,
    face_at,
    identity,
    textured_frame,
)
from tests.helpers.triton_models import EMBEDDING, LATENT_V2, both, remote, write_models
from tests.helpers.triton_venv import triton_venv

pytestmark = pytest.mark.timeout(900)

_spec = importlib.util.spec_from_file_location("bench_triton", Path(__file__).parents[3] / "bench" / "triton.py")
bench = sys.modules.setdefault("bench_triton", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(bench)


@pytest.fixture(scope="module")
def triton(tmp_path_factory):
    venv = triton_venv()
    models_dir = tmp_path_factory.mktemp("models")
    write_models(models_dir)
    work = tmp_path_factory.mktemp("triton")
    # A long queue delay with preferred batch 8: concurrent requests reliably meet in one batch.
    batching = launcher.BatchingSettings(
        max_batch_size=16, preferred_batch_sizes=[8], max_queue_delay_us=200_000
    )
    served = launcher.build_repository(models_dir, work, batching=batching)
    process = launcher.start(
        work / "repository",
        venv=venv,
        work_dir=work,
        ports=(launcher.free_port(), launcher.free_port(), launcher.free_port()),
        models=served,
        intra_op_threads=1,
    )
    try:
        process.wait_ready(timeout_s=300)
        yield models_dir, process
    finally:
        process.stop()
        triton_client.clear()


@pytest.fixture(autouse=True)
def _fresh():
    clear_sessions()
    triton_client.clear()
    yield
    clear_sessions()


def test_every_adapter_is_bit_identical_through_triton(triton):
    models_dir, process = triton
    local, served = both(models_dir, process, "inswapper_128")
    frame = textured_frame()
    faces = [face_at("arcface_128", 128, x, y) for x, y in [(10, 10), (180, 20), (40, 180)]]
    expected = local.swap(identity(EMBEDDING), frame, faces)
    np.testing.assert_array_equal(served.swap(identity(EMBEDDING), frame, faces), expected)
    # Not vacuous: the stand-in swapped something (B = 0.4 · 255 at a face centre).
    assert expected[10 + 64, 10 + 64, 0] == round(LATENT_0 * 255)

    local, served = both(models_dir, process, "arcface_w600k_r50")
    faces112 = [face_at("arcface_112_v2", 112, 5, 5), face_at("arcface_112_v2", 112, 150, 150)]
    for a, b in zip(local.embed(frame, faces112), served.embed(frame, faces112), strict=True):
        np.testing.assert_array_equal(a, b)

    big = enhancer_frame()
    face512 = [face_at("ffhq_512", 512, 20, 30)]
    for name in ("gfpgan_1.4", "codeformer"):
        local, served = both(models_dir, process, name)
        np.testing.assert_array_equal(served.enhance(big, face512), local.enhance(big, face512))
    local.weight = served.weight = 1.0  # codeformer's non-batched `weight` input reaches the model
    np.testing.assert_array_equal(served.enhance(big, face512), local.enhance(big, face512))

    local, served = both(models_dir, process, "yoloface_8n")  # a fixed-batch-1 export
    image = np.full((960, 1280, 3), (230, 100, 20), np.uint8)
    ours, theirs = local.detect(image), served.detect(image)
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a.box, b.box)
        np.testing.assert_array_equal(a.landmarks_5, b.landmarks_5)
        assert a.score == b.score

    local, served = both(models_dir, process, "2dfan4")
    boxes = [face_at("arcface_128", 128, 30, 40)]
    for a, b in zip(local.refine(frame, boxes), served.refine(frame, boxes), strict=True):
        np.testing.assert_array_equal(a.landmarks_68, b.landmarks_68)
        np.testing.assert_array_equal(a.landmarks_5, b.landmarks_5)


def test_pipeline_through_triton_matches_local(triton):
    models_dir, process = triton
    image = textured_frame(480, 640)
    config = PipelineConfig(models_dir=models_dir, runtime=CPU, detector="yoloface_8n", landmarker="2dfan4")
    local = Pipeline(config)
    served = Pipeline(replace(config, runtime=remote(process)))
    assert served.backends == local.backends
    options = SwapOptions(enhance=True)
    frame = np.full((960, 1280, 3), (230, 100, 20), np.uint8)
    frame[:480, :640] = image
    expected = local.swap_frame(local.prepare_source([frame]), frame, options)
    result = served.swap_frame(served.prepare_source([frame]), frame, options)
    np.testing.assert_array_equal(result.image, expected.image)
    assert (result.image != frame).any()


def test_triton_batches_requests_from_concurrent_jobs(triton):
    models_dir, process = triton
    swapper = registry.load_adapter("inswapper_128", models_dir, remote(process))
    before = triton_client.batch_sizes(process.grpc_url, "inswapper_128").get(1, {})
    metrics_before = bench.triton_metrics(process.metrics_url)
    frame = textured_frame()
    face = [face_at("arcface_128", 128, 10, 10)]
    barrier = threading.Barrier(8)
    results = [None] * 8

    def job(i: int) -> None:
        barrier.wait()
        results[i] = swapper.swap(identity(EMBEDDING), frame, face)

    threads = [threading.Thread(target=job, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    after = triton_client.batch_sizes(process.grpc_url, "inswapper_128")[1]  # Triton's own statistics
    runs = {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}
    assert sum(size * count for size, count in runs.items()) == 8  # every job's face ran once
    assert max(runs) > 1, f"Triton never merged two jobs into one batch: {runs}"
    # bench/triton.py's batch fill, from Triton's metrics endpoint: requests per execution.
    changes = bench.delta(metrics_before, bench.triton_metrics(process.metrics_url))
    assert bench.batch_fill(changes)["inswapper_128 v1"] == pytest.approx(8 / sum(runs.values()))


def test_canary_jobs_run_version_2_and_record_it(triton):
    models_dir, process = triton
    versions.start_canary("inswapper_128", 2, models_dir)
    try:
        swapper = registry.load_adapter("inswapper_128", models_dir, remote(process))
        frame = textured_frame()
        face = [face_at("arcface_128", 128, 10, 10)]
        ids = [f"job-{i}" for i in range(100)]
        on_canary = next(j for j in ids if canary.is_canary(j, 50))
        on_stable = next(j for j in ids if not canary.is_canary(j, 50))
        with canary.job_routing(on_canary, models_dir=models_dir, percent=50) as routing:
            result = swapper.swap(identity(EMBEDDING), frame, face)
        assert routing.used == {"inswapper_128": 2}
        assert result[74, 74, 0] == round(LATENT_V2 * 255)  # version 2's emap, version 2's model
        with canary.job_routing(on_stable, models_dir=models_dir, percent=50) as routing:
            result = swapper.swap(identity(EMBEDDING), frame, face)
        assert routing.used == {"inswapper_128": 1}
        assert result[74, 74, 0] == round(LATENT_0 * 255)
        # The percentage changed (the CLI writes versions.json): the same session, next job.
        versions.start_canary("inswapper_128", 2, models_dir, percent=0)
        with canary.job_routing(on_canary, models_dir=models_dir, percent=50) as routing:
            result = swapper.swap(identity(EMBEDDING), frame, face)
        assert routing.used == {"inswapper_128": 1}
        assert result[74, 74, 0] == round(LATENT_0 * 255)
    finally:
        versions.rollback("inswapper_128", models_dir)


def test_readiness_reports_models_and_the_one_that_failed_to_load(triton):
    models_dir, process = triton
    state = triton_client.readiness(process.grpc_url)
    assert state["ready"]
    assert state["models"]["inswapper_128"]["versions"] == [1, 2]
    assert state["models"]["arcface_w600k_r50"]["versions"] == [1]  # v3 (not ONNX) left out
    assert any(line.startswith("crossface_ghost v1: ") for line in state["failed"]), state["failed"]
    assert set(state["models"]) == {
        "inswapper_128",
        "arcface_w600k_r50",
        "gfpgan_1.4",
        "codeformer",
        "2dfan4",
        "yoloface_8n",
    }


def test_the_client_reads_visage_metadata_through_the_standard_model_config(triton):
    """No custom catalog model: names, versions and licences come from config parameters."""
    models_dir, process = triton
    served = triton_client.served_models(process.grpc_url)
    assert served["gfpgan_1.4"].triton_name == "gfpgan_1_4"
    assert served["inswapper_128"].parameters["emap_model"] == "inswapper_128_emap"
    assert served["inswapper_128"].parameters["licence"] == registry.get_spec("inswapper_128").licence
    assert "visage_catalog" not in {m.triton_name for m in served.values()}


def test_triton_down_is_a_transient_inference_error(tmp_path):
    url = f"grpc://127.0.0.1:{launcher.free_port()}"  # nothing listens there
    assert triton_client.readiness(url)["ready"] is False
    options = replace(CPU, inference="triton", triton_url=url)
    with pytest.raises(InferenceUnavailable) as caught:
        registry.load_adapter("inswapper_128", tmp_path, options)
    assert caught.value.transient


def test_swap_serve_command_starts_triton_and_stops_it_on_sigterm(triton, tmp_path):
    import signal
    import subprocess
    import sys
    import time

    models_dir, _ = triton
    http, grpc, metrics = launcher.free_port(), launcher.free_port(), launcher.free_port()
    command = [
        sys.executable, "-m", "swap", "serve", "--models-dir", str(models_dir), "--models", "gfpgan_1.4",
        "--work-dir", str(tmp_path / "work"), "--venv", str(triton_venv()),
        "--http-port", str(http), "--grpc-port", str(grpc), "--metrics-port", str(metrics),
    ]  # fmt: skip
    serve = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = serve.stdout.readline()
        assert line.startswith("Triton ready:"), line + serve.stdout.read()
        assert "gfpgan_1.4 v1" in line
        state = triton_client.readiness(f"grpc://127.0.0.1:{grpc}")
        assert state["ready"] and set(state["models"]) == {"gfpgan_1.4"}
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5) as response:
            assert 'nv_inference_count{model="gfpgan_1_4",version="1"}' in response.read().decode()
    finally:
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(60) == 0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and triton_client.server_ready(f"grpc://127.0.0.1:{grpc}"):
        time.sleep(0.5)
    triton_client.clear()
    assert not triton_client.server_ready(f"grpc://127.0.0.1:{grpc}")  # Triton went down with the command


def test_sigterm_while_triton_starts_leaves_nothing_serving(triton, tmp_path):
    """A stop that arrives before Triton is ready (a pod deleted during start-up) stops Triton too:
    no tritonserver (or Python-backend stub) is left running without its parent."""
    import signal
    import subprocess
    import sys
    import time

    import psutil

    models_dir, _ = triton
    work = tmp_path / "starting"
    http, grpc, metrics = launcher.free_port(), launcher.free_port(), launcher.free_port()
    command = [
        sys.executable, "-m", "swap", "serve", "--models-dir", str(models_dir), "--models", "gfpgan_1.4",
        "--work-dir", str(work), "--venv", str(triton_venv()),
        "--http-port", str(http), "--grpc-port", str(grpc), "--metrics-port", str(metrics),
    ]  # fmt: skip
    serve = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def started() -> list[psutil.Process]:
        found = []
        for process in psutil.process_iter(["pid", "cmdline"]):
            cmdline = " ".join(process.info["cmdline"] or [])
            if process.pid != serve.pid and (str(work) in cmdline or f"{grpc}" in cmdline):
                found.append(process)
        return found

    deadline = time.monotonic() + 60
    while not started() and serve.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started(), "Triton never started"
    assert not triton_client.server_ready(f"grpc://127.0.0.1:{grpc}")  # still starting
    serve.send_signal(signal.SIGTERM)
    assert serve.wait(90) == 0, serve.stdout.read()
    leftover = [p for p in started() if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert leftover == [], [p.info["cmdline"] for p in leftover]


def test_triton_exports_the_series_the_rules_and_dashboard_read(triton):
    """deploy/prometheus and deploy/grafana read Triton's own series (tests/deploy/triton_metrics.txt);
    a running Triton exports every one of them."""
    from tests.deploy.exported import triton_series

    _, process = triton
    with urllib.request.urlopen(process.metrics_url, timeout=10) as response:
        text = response.read().decode()
    exported = {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")}
    assert triton_series() <= exported, triton_series() - exported
