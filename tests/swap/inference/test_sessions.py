"""onnxruntime sessions: cache, load counting, warm-up, batching and install diagnostics."""

from __future__ import annotations

import importlib.metadata
import logging

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

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


def _conv_model(weights: np.ndarray) -> bytes:
    """A 1x1 convolution with these (out, in, 1, 1) float32 weights."""
    out_channels, in_channels = weights.shape[:2]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"])],
        "conv",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, in_channels, 4, 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, out_channels, 4, 4])],
        [numpy_helper.from_array(weights, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def test_subnormal_weights_are_set_to_zero_and_the_rest_kept():
    tiny = np.finfo(np.float32).tiny  # the smallest normal float32
    weights = np.array([[0.5, tiny / 4], [-tiny / 1000, tiny], [-0.25, 0.0]], np.float32)[..., None, None]
    assert np.count_nonzero((weights != 0) & (np.abs(weights) < tiny)) == 2
    model = _conv_model(weights)
    flushed = sessions.without_subnormal_weights(model)
    kept = numpy_helper.to_array(onnx.load_from_string(flushed).graph.initializer[0])
    expected = weights.copy()
    expected[0, 1] = expected[1, 0] = 0.0
    assert np.array_equal(kept, expected)  # the normal ones (tiny itself included) untouched
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype(np.float32)
    run = lambda m: ort.InferenceSession(m, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]  # noqa: E731
    # All they added was below 1e-37 (RapidOCR's detector: bit for bit the same, tests/moderation/test_ocr.py).
    assert np.abs(run(flushed) - run(model)).max() < 1e-37

    clean = _conv_model(np.array([[1.0, -2.0]], np.float32)[..., None, None])
    assert sessions.without_subnormal_weights(clean) is clean  # nothing to change: the same bytes
