"""Per-frame clocks: time inside model inference (billed as "GPU seconds") and sub-stages.

The pipeline opens a `session()` per frame; adapters wrap each model call in `measure()`
and may split off a sub-stage (the classical swapper reports its blend as "paste").
A context variable keeps concurrent frames (threads) apart.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class FrameClock:
    inference_ms: float = 0.0
    stages_ms: dict[str, float] = field(default_factory=dict)


_current: contextvars.ContextVar[FrameClock | None] = contextvars.ContextVar("frame_clock", default=None)


@contextmanager
def session() -> Iterator[FrameClock]:
    clock = FrameClock()
    token = _current.set(clock)
    try:
        yield clock
    finally:
        _current.reset(token)


@contextmanager
def measure() -> Iterator[None]:
    """Count the enclosed block as model inference."""
    start = time.perf_counter()
    try:
        yield
    finally:
        clock = _current.get()
        if clock is not None:
            clock.inference_ms += (time.perf_counter() - start) * 1000.0


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
