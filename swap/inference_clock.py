"""Per-frame clocks: time inside model inference (billed as "GPU seconds") and sub-stages.

The pipeline opens a `session()` per frame; adapters wrap each model call in `measure()`
and may split off a sub-stage (the classical swapper reports its blend as "paste").
A context variable keeps concurrent frames (threads) apart.

Observers (`add_observer`) hear about every model run that names its model: the worker registers
one that feeds Prometheus histograms, so the engine reports per-model timings without importing
anything of the platform.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class FrameClock:
    inference_ms: float = 0.0
    stages_ms: dict[str, float] = field(default_factory=dict)


_current: contextvars.ContextVar[FrameClock | None] = contextvars.ContextVar("frame_clock", default=None)

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


@contextmanager
def measure(model: str | None = None, provider: str = "cpu", batch_size: int | None = None) -> Iterator[None]:
    """Count the enclosed block as model inference; a named model's run is also told to observers."""
    start = time.perf_counter()
    try:
        yield
    finally:
        elapsed_s = time.perf_counter() - start
        clock = _current.get()
        if clock is not None:
            clock.inference_ms += elapsed_s * 1000.0
        if model is not None and _observers:
            _notify(model, provider, elapsed_s, batch_size)


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
