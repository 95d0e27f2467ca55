"""The engine's inference observers: every named model run is reported with its model, provider
and batch size, so the platform can publish per-model timings without the engine importing it."""

from __future__ import annotations

import numpy as np
import pytest

from swap.config import RuntimeOptions
from swap.inference import clock as inference_clock
from swap.inference.runs import run_in_batches
from swap.inference.sessions import get_session
from swap.models import standins as fx

CPU = RuntimeOptions(providers=["CPUExecutionProvider"])


@pytest.fixture
def heard():
    calls = []

    def observer(model, provider, seconds, batch_size):
        calls.append((model, provider, seconds, batch_size))

    inference_clock.add_observer(observer)
    yield calls
    inference_clock.remove_observer(observer)


def test_each_batch_of_a_model_run_is_reported_with_model_provider_and_size(tmp_path, heard):
    session = get_session(fx.make_arcface(tmp_path / "arcface_probe.onnx"), CPU)
    images = np.random.default_rng(0).random((5, 3, 112, 112), dtype=np.float32)
    with inference_clock.session() as clock:
        run_in_batches(session, {"input.1": images}, max_batch=2)
    assert [(m, p, b) for m, p, _, b in heard] == [
        ("arcface_probe", "cpu", 2),
        ("arcface_probe", "cpu", 2),
        ("arcface_probe", "cpu", 1),
    ]
    assert all(seconds >= 0 for _, _, seconds, _ in heard)
    assert clock.inference_ms > 0  # the billed clock (CPU time here) counted the same runs


def test_an_unnamed_measure_and_a_failing_observer_change_nothing(heard):
    def broken(*args):
        raise RuntimeError("telemetry down")

    inference_clock.add_observer(broken)
    try:
        with inference_clock.session() as clock:
            with inference_clock.measure():
                pass
            with inference_clock.measure("dlib_hog", "dlib", 1):
                pass
    finally:
        inference_clock.remove_observer(broken)
    assert [(m, p, b) for m, p, _, b in heard] == [("dlib_hog", "dlib", 1)]
    assert clock.inference_ms >= 0
