"""Per-frame clocks: the work inside model calls (billed as "GPU seconds") and sub-stages.

The pipeline opens a `session()` per frame; adapters wrap each model call in `measure()`
and may split off a sub-stage (the classical swapper reports its blend as "paste").
A context variable keeps concurrent frames (threads) apart.

What a model call is billed (`FrameClock.inference_ms`) depends on where it runs:

- On this machine's CPU (dlib's models, onnxruntime's CPUExecutionProvider, an adapter that does
  not meter its own calls): the CPU time the call consumed, i.e. the calling thread's CPU time
  plus, for an onnxruntime session with an intra-op thread pool, the CPU time of the pool's
  threads during the call (`swap.inference.sessions.pool_threads`). dlib runs single-threaded in the calling
  thread. Other threads of the process (a video's decoder and encoder run beside the model calls)
  and other processes on shared cores are not counted, nor is time spent waiting for a core, so
  the same work is billed the same on a quiet and on a busy machine, at warm-up (the quote's
  calibration) and in a job (the charge).
- On an accelerator (CUDA, TensorRT): the wall time of the call, which includes the device sync
  (the accelerator is the worker's own).
- In the Triton service: the model work the call caused on the server, which the client reports
  inside the call (`report_compute`; swap.inference.triton_client: the stand-in's per-response
  compute, else the request's share of the batches in Triton's statistics), not the round trip,
  its queueing or the network. A call that reports nothing is billed its wall time.

Observers (`add_observer`) hear about every model run that names its model, with the call's wall
time (latency, not the billed measure): the worker registers one that feeds Prometheus histograms,
so the engine reports per-model timings without importing anything of the platform. Sub-stages
(`stage`) are wall time too.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class FrameClock:
    inference_ms: float = 0.0
    stages_ms: dict[str, float] = field(default_factory=dict)


_current: contextvars.ContextVar[FrameClock | None] = contextvars.ContextVar("frame_clock", default=None)
# Model work reported from inside the measured call (a remote server's compute), in seconds.
_reported: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar("reported_compute", default=None)

# (model, provider, seconds, batch_size or None) -> None
InferenceObserver = Callable[[str, str, float, "int | None"], None]
_observers: list[InferenceObserver] = []


def add_observer(observer: InferenceObserver) -> None:
    """Call `observer` after every named model run (idempotent per observer)."""
    if observer not in _observers:
        _observers.append(observer)


def remove_observer(observer: InferenceObserver) -> None:
    if observer in _observers:
        _observers.remove(observer)


def _notify(model: str, provider: str, seconds: float, batch_size: int | None) -> None:
    for observer in list(_observers):
        try:
            observer(model, provider, seconds, batch_size)
        except Exception:  # noqa: BLE001 - telemetry must never fail a swap
            pass


@contextmanager
def session() -> Iterator[FrameClock]:
    clock = FrameClock()
    token = _current.set(clock)
    try:
        yield clock
    finally:
        _current.reset(token)


# Providers whose model calls run on this process's CPU threads (swap.inference.runs reports
# onnxruntime's without "ExecutionProvider", in lower case; dlib's models run in the calling thread).
CPU_PROVIDERS = frozenset({"cpu", "dlib"})


def thread_cpu_seconds(native_id: int) -> float:
    """CPU time of another thread of this process, by its native (kernel) id. Linux only: the
    clock id is the one glibc's pthread_getcpuclockid builds for it (CPUCLOCK_SCHED of thread
    `native_id`), exact to the nanosecond, also while the thread runs."""
    return time.clock_gettime((~native_id << 3) | 6)


def _cpu_seconds(pool_threads: Collection[int]) -> float:
    return time.thread_time() + sum(_pool_thread_seconds(native_id) for native_id in pool_threads)


def _pool_thread_seconds(native_id: int) -> float:
    try:
        return thread_cpu_seconds(native_id)
    except OSError:  # the thread has gone (its session was dropped): metering never fails a swap
        return 0.0


def report_compute(seconds: float) -> None:
    """The enclosing `measure()`d call caused `seconds` of model work elsewhere (the Triton
    service): bill that instead of the call's wall time. Outside a measured call: ignored."""
    reported = _reported.get()
    if reported is not None:
        reported.append(seconds)


@contextmanager
def measure(
    model: str | None = None,
    provider: str = "cpu",
    batch_size: int | None = None,
    *,
    pool_threads: Collection[int] = (),
) -> Iterator[None]:
    """Count the enclosed model call as inference: its CPU time (the calling thread's and
    `pool_threads`', the native ids of the threads that work for it) when `provider` runs on the
    CPU, else its wall time. A named model's run is also told to observers, with its wall time."""
    on_cpu = provider in CPU_PROVIDERS
    cpu_start = _cpu_seconds(pool_threads) if on_cpu else 0.0
    reported: list[float] = []
    token = _reported.set(reported)
    start = time.perf_counter()
    try:
        yield
    finally:
        wall_s = time.perf_counter() - start
        _reported.reset(token)
        if on_cpu:
            billed_s = max(0.0, _cpu_seconds(pool_threads) - cpu_start)
        else:
            billed_s = sum(reported) if reported else wall_s
        clock = _current.get()
        if clock is not None:
            clock.inference_ms += billed_s * 1000.0
        if model is not None and _observers:
            _notify(model, provider, wall_s, batch_size)


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Count the enclosed block as sub-stage `name` (e.g. "paste" inside the swapper)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        clock = _current.get()
        if clock is not None:
            clock.stages_ms[name] = clock.stages_ms.get(name, 0.0) + (time.perf_counter() - start) * 1000.0
