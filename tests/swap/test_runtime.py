"""onnxruntime sessions: cache, load counting, warm-up, batching and install diagnostics."""

from __future__ import annotations

import importlib.metadata
import logging

import numpy as np
import pytest

from swap import runtime
from tests.swap import onnx_fixtures as fx

CPU = runtime.RuntimeOptions(providers=["CPUExecutionProvider"], intra_op_threads=1)

pytestmark = pytest.mark.usefixtures("fresh_sessions")


def test_default_providers_are_filtered_to_the_available_ones():
    options = runtime.RuntimeOptions()
    assert options.providers
    assert set(options.providers) <= set(runtime.available_providers())
    order = list(runtime.PREFERRED_PROVIDERS)
    assert [order.index(p) for p in options.providers] == sorted(order.index(p) for p in options.providers)
    assert hash(options) == hash(runtime.RuntimeOptions(providers=list(options.providers)))


def test_sessions_are_cached_per_path_and_options_and_counted_once(tmp_path):
    path = fx.make_arcface(tmp_path / "stub.onnx")
    before = runtime.model_load_counts().get("stub", 0)
    first = runtime.get_session(path, CPU)
    assert runtime.get_session(path, CPU) is first
    assert runtime.model_load_counts()["stub"] == before + 1
    other = runtime.get_session(
        path, runtime.RuntimeOptions(providers=["CPUExecutionProvider"], intra_op_threads=2)
    )
    assert other is not first
    assert runtime.model_load_counts()["stub"] == before + 2


def test_record_model_load_counts_other_backends():
    before = runtime.model_load_counts().get("dlib_test_model", 0)
    runtime.record_model_load("dlib_test_model")
    assert runtime.model_load_counts()["dlib_test_model"] == before + 1


def test_warm_up_and_timed_run(tmp_path):
    session = runtime.get_session(fx.make_arcface(tmp_path / "arcface.onnx"), CPU)
    runtime.warm_up(session)
    feeds = {"input.1": np.zeros((2, 3, 112, 112), np.float32)}
    (embeddings,), seconds = runtime.timed_run(session, None, feeds)
    assert embeddings.shape == (2, 512)
    assert seconds >= 0.0


def test_run_in_batches_splits_dynamic_and_loops_fixed(tmp_path):
    dynamic = runtime.get_session(fx.make_arcface(tmp_path / "dyn.onnx"), CPU)
    fixed = runtime.get_session(fx.make_arcface(tmp_path / "fixed.onnx", batch=1), CPU)
    assert runtime.batch_dim_is_dynamic(dynamic) and not runtime.batch_dim_is_dynamic(fixed)
    images = np.random.default_rng(0).random((5, 3, 112, 112), dtype=np.float32)
    (a,) = runtime.run_in_batches(dynamic, {"input.1": images}, max_batch=2)
    (b,) = runtime.run_in_batches(fixed, {"input.1": images}, max_batch=16)
    assert a.shape == b.shape == (5, 512)
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_install_problem_when_both_onnxruntime_distributions_are_installed(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "version", lambda dist: "1.0")
    problem = runtime.onnxruntime_install_problem()
    assert (
        problem and "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu" in problem
    )


def test_no_install_problem_with_one_distribution(monkeypatch):
    def version(dist):
        if dist == "onnxruntime-gpu":
            raise importlib.metadata.PackageNotFoundError(dist)
        return "1.0"

    monkeypatch.setattr(importlib.metadata, "version", version)
    assert runtime.onnxruntime_install_problem() is None


def test_cuda_preference_without_cuda_logs_the_fix(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(runtime, "available_providers", lambda: ["CPUExecutionProvider"])
    monkeypatch.setattr(importlib.metadata, "version", lambda dist: "1.0")
    options = runtime.RuntimeOptions(providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    with caplog.at_level(logging.WARNING, logger="swap.runtime"):
        session = runtime.get_session(fx.make_arcface(tmp_path / "a.onnx"), options)
    assert session.get_providers() == ["CPUExecutionProvider"]
    assert "pip install onnxruntime-gpu" in caplog.text
