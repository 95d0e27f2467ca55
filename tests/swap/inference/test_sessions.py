"""onnxruntime sessions: cache, load counting, warm-up, batching and install diagnostics."""

from __future__ import annotations

import importlib.metadata
import logging

import numpy as np
import pytest

from swap import config
from swap.config import PREFERRED_PROVIDERS, RuntimeOptions, available_providers
from swap.inference import sessions
from swap.inference.runs import batch_dim_is_dynamic, run_in_batches, timed_run, warm_up
from swap.inference.sessions import (
    get_session,
    model_load_counts,
    onnxruntime_install_problem,
    record_model_load,
)
from swap.models import standins as fx

CPU = RuntimeOptions(providers=["CPUExecutionProvider"], intra_op_threads=1)

pytestmark = pytest.mark.usefixtures("fresh_sessions")


def test_default_providers_are_filtered_to_the_available_ones():
    options = RuntimeOptions()
    assert options.providers
    assert set(options.providers) <= set(available_providers())
    order = list(PREFERRED_PROVIDERS)
    assert [order.index(p) for p in options.providers] == sorted(order.index(p) for p in options.providers)
    assert hash(options) == hash(RuntimeOptions(providers=list(options.providers)))


def test_sessions_are_cached_per_path_and_options_and_counted_once(tmp_path):
    path = fx.make_arcface(tmp_path / "stub.onnx")
    before = model_load_counts().get("stub", 0)
    first = get_session(path, CPU)
    assert get_session(path, CPU) is first
    assert model_load_counts()["stub"] == before + 1
    other = get_session(path, RuntimeOptions(providers=["CPUExecutionProvider"], intra_op_threads=2))
    assert other is not first
    assert model_load_counts()["stub"] == before + 2


def test_record_model_load_counts_other_backends():
    before = model_load_counts().get("dlib_test_model", 0)
    record_model_load("dlib_test_model")
    assert model_load_counts()["dlib_test_model"] == before + 1


def test_warm_up_and_timed_run(tmp_path):
    session = get_session(fx.make_arcface(tmp_path / "arcface.onnx"), CPU)
    warm_up(session)
    feeds = {"input.1": np.zeros((2, 3, 112, 112), np.float32)}
    (embeddings,), seconds = timed_run(session, None, feeds)
    assert embeddings.shape == (2, 512)
    assert seconds >= 0.0


def test_run_in_batches_splits_dynamic_and_loops_fixed(tmp_path):
    dynamic = get_session(fx.make_arcface(tmp_path / "dyn.onnx"), CPU)
    fixed = get_session(fx.make_arcface(tmp_path / "fixed.onnx", batch=1), CPU)
    assert batch_dim_is_dynamic(dynamic) and not batch_dim_is_dynamic(fixed)
    images = np.random.default_rng(0).random((5, 3, 112, 112), dtype=np.float32)
    (a,) = run_in_batches(dynamic, {"input.1": images}, max_batch=2)
    (b,) = run_in_batches(fixed, {"input.1": images}, max_batch=16)
    assert a.shape == b.shape == (5, 512)
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_install_problem_when_both_onnxruntime_distributions_are_installed(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "version", lambda dist: "1.0")
    problem = onnxruntime_install_problem()
    assert (
        problem and "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu" in problem
    )


def test_no_install_problem_with_one_distribution(monkeypatch):
    def version(dist):
        if dist == "onnxruntime-gpu":
            raise importlib.metadata.PackageNotFoundError(dist)
        return "1.0"

    monkeypatch.setattr(importlib.metadata, "version", version)
    assert onnxruntime_install_problem() is None


def test_cuda_preference_without_cuda_logs_the_fix(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(config, "available_providers", lambda: ["CPUExecutionProvider"])
    monkeypatch.setattr(sessions, "available_providers", lambda: ["CPUExecutionProvider"])
    monkeypatch.setattr(importlib.metadata, "version", lambda dist: "1.0")
    options = RuntimeOptions(providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    with caplog.at_level(logging.WARNING, logger="swap.inference.sessions"):
        session = get_session(fx.make_arcface(tmp_path / "a.onnx"), options)
    assert session.get_providers() == ["CPUExecutionProvider"]
    assert "pip install onnxruntime-gpu" in caplog.text
