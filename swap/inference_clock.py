"""Accumulate time spent inside model inference calls (billed as "GPU seconds").

The pipeline opens a `session()` per frame; adapters wrap each model call in `measure()`.
A context variable keeps concurrent frames (threads) apart.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

_current: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar("inference_ms", default=None)


@contextmanager
def session() -> Iterator[list[float]]:
    """Collect inference time of everything measured inside; the total is `box[0]` (ms)."""
    box = [0.0]
    token = _current.set(box)
    try:
        yield box
    finally:
        _current.reset(token)


@contextmanager
def measure() -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        box = _current.get()
        if box is not None:
            box[0] += (time.perf_counter() - start) * 1000.0
