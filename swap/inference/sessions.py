"""onnxruntime sessions in this process: a per-process cache, load counting and install diagnostics.

A GPU worker builds its pipeline once; every model it needs is loaded through
`get_session` (or, for dlib, announced with `record_model_load`) so the platform can prove
that models load once per worker process (`model_load_counts`). Which providers a session gets
comes from `swap.config.RuntimeOptions`.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import threading
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

from swap.config import RuntimeOptions, available_providers

log = logging.getLogger(__name__)

INSTALL_FIX = "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu"


_lock = threading.Lock()
_creating = threading.Lock()
_sessions: dict[tuple, ort.InferenceSession] = {}
_load_counts: Counter[str] = Counter()
# Native ids of the threads each session (or session wrapper) runs its model on besides the caller:
# a CPU session's intra-op pool (swap.inference.clock bills their CPU time).
_pool_threads: weakref.WeakKeyDictionary[Any, frozenset[int]] = weakref.WeakKeyDictionary()


def record_model_load(name: str) -> None:
    """Count one model load in this process (ONNX sessions here, dlib models in their backends)."""
    with _lock:
        _load_counts[name] += 1


def model_load_counts() -> dict[str, int]:
    with _lock:
        return dict(_load_counts)


def onnxruntime_install_problem() -> str | None:
    """Both `onnxruntime` and `onnxruntime-gpu` installed: the CPU one shadows the GPU one.

    nudenet depends on the CPU distribution, so a plain `pip install` of the project gets
    this wrong on GPU hosts; CUDA then silently is not available.
    """
    installed = []
    for dist in ("onnxruntime", "onnxruntime-gpu"):
        try:
            importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
        installed.append(dist)
    if len(installed) == 2:
        return (
            "Both onnxruntime and onnxruntime-gpu are installed; the CPU build shadows the GPU one "
            f"and CUDA is unavailable. Fix: {INSTALL_FIX}"
        )
    return None


def _provider_list(options: RuntimeOptions) -> list[Any]:
    providers: list[Any] = []
    for name in options.resolved_providers():
        if name in ("CUDAExecutionProvider", "TensorrtExecutionProvider"):
            providers.append((name, {"device_id": options.device_id}))
        else:
            providers.append(name)
    return providers


def _warn_if_cuda_missing(options: RuntimeOptions) -> None:
    wants_gpu = any(p in ("CUDAExecutionProvider", "TensorrtExecutionProvider") for p in options.providers)
    if wants_gpu and "CUDAExecutionProvider" not in available_providers():
        problem = onnxruntime_install_problem()
        log.warning(
            "CUDA was requested but onnxruntime offers only %s. %s",
            available_providers(),
            problem or "Install onnxruntime-gpu with a matching CUDA runtime.",
        )


def get_session(path: Path, options: RuntimeOptions | None = None) -> ort.InferenceSession:
    """The process-wide session for this model file and options (created on first use)."""
    options = options or RuntimeOptions()
    path = Path(path).resolve()
    return _cached_session((str(path), options.key()), str(path), options, path.stem)


def get_model_session(name: str, model: bytes, options: RuntimeOptions | None = None) -> ort.InferenceSession:
    """The process-wide session for a model built in memory (serialized ONNX `model`), counted as
    a load of `name`. Cached by `name` and the model's digest, so equal bytes share one session."""
    options = options or RuntimeOptions()
    key = (f"memory:{name}:{hashlib.sha256(model).hexdigest()}", options.key())
    return _cached_session(key, model, options, name)


def without_subnormal_weights(model: bytes) -> bytes:
    """The serialized ONNX `model` with every float32 weight of magnitude below float32's smallest
    normal number (a subnormal, |w| < 1.18e-38) set to zero; `model` itself when it has none.

    A CPU multiplies a subnormal operand tens of times slower than a normal one, and onnxruntime's
    flush-to-zero setting (session.set_denormal_as_zero) reaches its pool threads, not a one-thread
    session's caller. RapidOCR's PP-OCRv6 small text detector ships 255,958 subnormal weights of
    2.45 M: two of its 1x1 convolutions took 74 of its 105 ms on a 480x288 input; flushed, the
    whole model takes ~30 ms, its output bit for bit the same (a product of ~1e-38 vanishes in any
    sum of normal numbers)."""
    graph = onnx.load_from_string(model)
    changed = False
    for weights in graph.graph.initializer:
        if weights.data_type != onnx.TensorProto.FLOAT:
            continue
        values = numpy_helper.to_array(weights)
        subnormal = (values != 0) & (np.abs(values) < np.finfo(np.float32).tiny)
        if subnormal.any():
            weights.CopyFrom(numpy_helper.from_array(np.where(subnormal, np.float32(0), values), weights.name))
            changed = True
    return graph.SerializeToString() if changed else model


def _cached_session(
    key: tuple, model: str | bytes, options: RuntimeOptions, name: str
) -> ort.InferenceSession:
    with _lock:
        session = _sessions.get(key)
        if session is not None:
            return session
    _warn_if_cuda_missing(options)
    so = ort.SessionOptions()
    so.intra_op_num_threads = options.intra_op_threads
    so.inter_op_num_threads = options.inter_op_threads
    so.log_severity_level = 3  # onnxruntime's own warnings are noisy (e.g. unused initializers)
    if options.resolved_providers()[0] == "CPUExecutionProvider":
        # A spinning pool thread burns CPU waiting for work, during a run (billed, and more or less
        # of it with the machine's load) and for tens of ms after it (taking a core from the video
        # decoder and encoder). Without spinning, the pool's CPU time in a run is its work.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # The intra-op pool's threads start with the session: the threads that appeared while it was
    # made (one session at a time), less Python's own (never the pool's).
    with _creating:
        threads_before = _native_thread_ids()
        session = ort.InferenceSession(model, sess_options=so, providers=_provider_list(options))
        pool = _native_thread_ids() - threads_before - {t.native_id for t in threading.enumerate()}
    with _lock:
        # Another thread may have raced us; keep the first session so there is only one.
        existing = _sessions.get(key)
        if existing is not None:
            return existing
        _sessions[key] = session
        _pool_threads[session] = frozenset(pool)
        _load_counts[name] += 1
    return session


def _native_thread_ids() -> set[int]:
    """This process's threads, by native (kernel) id (Linux; elsewhere none are known and a CPU
    session's pool is not billed)."""
    try:
        return {int(name) for name in os.listdir("/proc/self/task")}
    except FileNotFoundError:
        return set()


def pool_threads(session: Any) -> frozenset[int]:
    """Native ids of the threads `session` runs its model on besides the calling thread (a CPU
    session's intra-op pool); none for a session this module did not create."""
    with _lock:
        return _pool_threads.get(session, frozenset())


def share_pool_threads(wrapper: Any, sessions: list[Any]) -> None:
    """`wrapper` runs each call on one of `sessions`: its calls are billed on their pools' threads."""
    with _lock:
        _pool_threads[wrapper] = frozenset().union(*(_pool_threads.get(s, frozenset()) for s in sessions))


def clear_sessions(under: Path | None = None) -> None:
    """Drop cached sessions (releasing VRAM before a worker recycles), or only those of model
    files inside `under` (a test's own models directory), leaving everyone else's loaded."""
    with _lock:
        if under is None:
            _sessions.clear()
            return
        root = Path(under).resolve()
        for key in [key for key in _sessions if Path(key[0]).is_relative_to(root)]:
            del _sessions[key]
