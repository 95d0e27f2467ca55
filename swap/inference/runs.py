"""Running a session: warm-up, the input dtypes a model expects, and batched, metered runs.

Works on any session surface the adapters get (an onnxruntime session, a canary's
`VersionedLocalSession`, a `TritonSession`): each run is billed on swap.inference.clock.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from swap.inference import clock as inference_clock
from swap.inference.dtypes import numpy_type
from swap.inference.sessions import pool_threads


def input_dtype(session: ort.InferenceSession, name: str) -> type:
    for node in session.get_inputs():
        if node.name == name:
            return numpy_type(node.type)
    raise KeyError(name)


def dummy_feeds(session: ort.InferenceSession) -> dict[str, np.ndarray]:
    """Zero inputs shaped from the model's metadata (symbolic dims become 1)."""
    feeds = {}
    for node in session.get_inputs():
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in node.shape]
        feeds[node.name] = np.zeros(shape, dtype=numpy_type(node.type))
    return feeds


def warm_up(session: ort.InferenceSession) -> None:
    """One dummy run so CUDA kernels, cuDNN autotuning and allocations happen before the first job."""
    session.run(None, dummy_feeds(session))


def timed_run(
    session: ort.InferenceSession, outputs: list[str] | None, feeds: dict[str, np.ndarray]
) -> tuple[list[np.ndarray], float]:
    """Run and time it. `run` returns host arrays, so the time includes the device sync."""
    start = time.perf_counter()
    result = session.run(outputs, feeds)
    return result, time.perf_counter() - start


def batch_dim_is_dynamic(session: ort.InferenceSession) -> bool:
    """True when the first input's batch dimension is symbolic (one run for N faces)."""
    first = session.get_inputs()[0].shape
    return not (isinstance(first[0], int) and first[0] > 0)


def run_in_batches(
    session: ort.InferenceSession,
    batched: dict[str, np.ndarray],
    constant: dict[str, np.ndarray] | None = None,
    max_batch: int = 16,
) -> list[np.ndarray]:
    """Run N items (axis 0 of every `batched` input) in as few runs as the model allows.

    A model exported with a dynamic batch dimension gets chunks of up to `max_batch` (one run
    for a typical frame); one exported with batch 1 is looped. Outputs are concatenated on
    axis 0, so callers see the same [N, ...] either way.
    """
    count = len(next(iter(batched.values())))
    step = max(1, max_batch) if batch_dim_is_dynamic(session) else 1
    chunks: list[list[np.ndarray]] = []
    for start in range(0, count, step):
        feeds = {name: value[start : start + step] for name, value in batched.items()}
        feeds.update(constant or {})
        with _measure(session, len(next(iter(feeds.values())))):
            chunks.append(session.run(None, feeds))
    return [np.concatenate([chunk[i] for chunk in chunks], axis=0) for i in range(len(chunks[0]))]


def _measure(session: ort.InferenceSession, batch_size: int):
    """A model run counts as billed device time (swap.inference.clock, owned by the pipeline: CPU
    time of the caller and the session's pool on the CPU provider, else wall time), and is reported
    per model and provider to the clock's observers."""
    model = Path(str(getattr(session, "_model_path", "") or "onnx")).stem
    providers = session.get_providers()
    provider = providers[0].removesuffix("ExecutionProvider").lower() if providers else "cpu"
    return inference_clock.measure(model, provider, batch_size, pool_threads=pool_threads(session))


def clock_stage(name: str):
    """Count a non-inference sub-stage (e.g. "paste") on the pipeline's frame clock, if present."""
    return inference_clock.stage(name)
