"""`make run INFERENCE=triton` (`visage_run --inference triton`): Triton starts on free ports of
127.0.0.1 (its defaults 8000-8002 collide with the site's :8000), the server answering must be the
one just started, no installed model means local inference (said so), and a moderation worker
started while Triton is down waits for it instead of crash-looping."""

from __future__ import annotations

import http.server
import os
import threading
import time
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.management.base import CommandError

from moderation import identities
from moderation import services as moderation_services
from swap.errors import InferenceUnavailable
from swap.inference import triton_client
from swap.serve import launcher
from tests.helpers.triton_models import write_models
from tests.helpers.triton_venv import triton_venv
from webapp.jobs import readiness
from webapp.ops import embedded
from webapp.ops.management.commands import visage_worker
from webapp.ops.management.commands.visage_run import Command as RunCommand

pytestmark = pytest.mark.timeout(900)

VENV = Path(os.environ.get("VISAGE_TRITON_VENV", launcher.DEFAULT_VENV))


def _needs_venv() -> None:
    assert triton_venv() == VENV


@pytest.fixture
def run_env(monkeypatch, settings, tmp_path):
    """visage_run's process environment and settings, restored after the test."""
    for key in ("VISAGE_INFERENCE", "VISAGE_TRITON_URL"):
        monkeypatch.setenv(key, os.environ.get(key, ""))
    settings.DATA_DIR = tmp_path / "data"
    settings.VISAGE_MODELS_DIR = tmp_path / "models"
    settings.VISAGE_MODELS_DIR.mkdir()
    yield settings
    triton_client.clear()


def _command() -> RunCommand:
    command = RunCommand(stdout=StringIO(), stderr=StringIO())
    return command


def test_no_installed_model_says_so_and_runs_local_inference(run_env):
    (run_env.VISAGE_MODELS_DIR / "face_landmark.tflite").write_bytes(b"not served by Triton")
    command = _command()
    assert command.start_triton(VENV) is None
    said = command.stdout._out.getvalue()
    assert "no models installed" in said and "LOCAL" in said
    assert os.environ["VISAGE_INFERENCE"] == run_env.VISAGE_INFERENCE == "local"


def test_triton_starts_on_free_ports_and_serves_the_installed_models(run_env):
    _needs_venv()
    write_models(run_env.VISAGE_MODELS_DIR)
    command = _command()
    started = command.start_triton(VENV)
    assert started is not None
    _, process = started
    try:
        command.wait_for_triton(process, timeout_s=300)
        url = os.environ["VISAGE_TRITON_URL"]
        assert url == run_env.VISAGE_TRITON_URL and os.environ["VISAGE_INFERENCE"] == "triton"
        http_port, grpc_port = command._triton_ports
        assert 8000 not in (http_port, grpc_port)  # the site's port stays free
        assert embedded.served_by_tree(grpc_port, process.pid)
        assert {"inswapper_128", "arcface_w600k_r50"} <= set(triton_client.served_models(url))
    finally:
        process.terminate()
        process.wait(60)
    assert not embedded.served_by_tree(grpc_port, process.pid)  # nothing left serving


class _Impostor(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)  # "ready", to anyone who asks
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_server_already_answering_on_the_port_is_refused(run_env, monkeypatch):
    """Another server answers /v2/health/ready on the port chosen (taken between the choice and
    Triton's bind): the stack must refuse rather than make it every worker's inference server."""
    _needs_venv()
    write_models(run_env.VISAGE_MODELS_DIR)
    impostor = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Impostor)
    threading.Thread(target=impostor.serve_forever, daemon=True).start()
    taken = impostor.server_address[1]
    ports = iter([taken, embedded.free_port(), embedded.free_port()])
    monkeypatch.setattr(embedded, "free_port", lambda: next(ports))
    command = _command()
    _, process = command.start_triton(VENV)
    try:
        with pytest.raises(CommandError, match="not the one just started|exited with"):
            command.wait_for_triton(process, timeout_s=300)
    finally:
        process.terminate()
        process.wait(60)
        impostor.shutdown()


def test_moderation_worker_waits_for_triton_instead_of_crashing(run_env, monkeypatch):
    """The crash-loop of issue 31: moderation's face analysis is the engine's, so under
    VISAGE_INFERENCE=triton its warm-up asks Triton; with Triton not up yet it raised
    InferenceUnavailable out of the worker (restarted, crashed again). Now it waits."""
    _needs_venv()
    write_models(run_env.VISAGE_MODELS_DIR)
    monkeypatch.setattr(identities, "_analyser", None)
    dead = f"grpc://127.0.0.1:{embedded.free_port()}"
    monkeypatch.setenv("VISAGE_INFERENCE", "triton")
    monkeypatch.setenv("VISAGE_TRITON_URL", dead)
    with pytest.raises(InferenceUnavailable):  # what used to end the worker
        moderation_services.warm_up()

    command = _command()
    started = command.start_triton(VENV)  # Triton comes up while the worker waits
    _, process = started
    live = os.environ["VISAGE_TRITON_URL"]
    monkeypatch.setenv("VISAGE_TRITON_URL", dead)
    waits = []

    def sleep(seconds):
        waits.append(seconds)
        command.wait_for_triton(process, timeout_s=300)
        os.environ["VISAGE_TRITON_URL"] = live

    monkeypatch.setattr(visage_worker, "time", SimpleNamespace(sleep=sleep))
    worker = visage_worker.Command(stdout=StringIO(), stderr=StringIO())
    try:
        name = "moderation-worker-under-test"
        worker._wait_for_inference(
            moderation_services.warm_up, lambda: None, [readiness.SCREENING], name, time.time()
        )
        assert waits == [1.0]
        assert "waiting for Triton" in worker.stderr._out.getvalue()
        # While it waited the site was told the screening worker is still warming up.
        connection = readiness._connection()
        assert name in {
            key.decode() if isinstance(key, bytes) else key
            for key in connection.hkeys(readiness._warming_key(readiness.SCREENING))
        }
        readiness.clear_warming(readiness.SCREENING, name)
        analyser = identities.get_analyser()
        assert analyser.pipeline.config.runtime.triton_url == live
        assert analyser.pipeline.backends["detector"] == "yoloface_8n"  # served by Triton
    finally:
        identities._analyser = None
        process.terminate()
        process.wait(60)
