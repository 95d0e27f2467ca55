"""Decode ahead, swap side by side and encode behind in threads, so no stage waits on another.

FaceFusion users' top complaint about video is a GPU idling while one CPU core decodes and
encodes. libav decodes and encodes with the GIL released, so one reader thread and one writer
thread overlap that work with the swap loop (bounded queues keep memory flat). The swaps
themselves (OpenCV and NumPy, mostly outside the GIL) run on a few threads at once
(`ordered_map`): one thread's swaps were the clip's bottleneck while the other core idled.
Frame order is kept everywhere: results are handed on in the order the frames came.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

_DONE = object()
_POLL_S = 0.1


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


def read_ahead(items: Iterable[Any], *, depth: int = 8) -> Iterator[Any]:
    """Iterate `items` in a background thread, `depth` items ahead of the consumer.

    An exception in the producer is raised in the consumer; a consumer that stops early (break,
    exception, generator closed) stops the producer too, and the producer closes `items` (a
    generator, e.g. another read_ahead: chained stages stop together).
    """
    buffer: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                buffer.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(item):
                    return
            put(_DONE)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            put(_Failed(exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    # In a copy of the consumer's context: what the worker bound (its log context, trace span)
    # reaches the lines logged while producing (decode, tracking).
    thread = threading.Thread(
        target=contextvars.copy_context().run, args=(produce,), name="video-read-ahead", daemon=True
    )
    thread.start()
    try:
        while True:
            item = buffer.get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        stop.set()
        thread.join(timeout=5)


def ordered_map(function: Callable[[Any], Any], items: Iterable[Any], *, workers: int) -> Iterator[Any]:
    """`function(item)` for each item on `workers` threads at once, results yielded in the items'
    order. At most `workers + 1` items are taken ahead of the consumer (memory stays flat). An
    exception is raised in the consumer at its item's place, after the results before it; a
    consumer that stops early (break, exception, generator closed) cancels the items not started
    and waits for the running ones. Each call runs in a copy of the caller's context (its log
    context, trace span and the like reach the threads). workers <= 1: plain `map` on the
    consumer's thread."""
    if workers <= 1:
        yield from map(function, items)
        return
    pending: deque[Future] = deque()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="video-swap") as pool:
        try:
            for item in items:
                pending.append(pool.submit(contextvars.copy_context().run, function, item))
                if len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


class WriteBehind:
    """Call `write(item)` for each submitted item in a background thread, in order.

    `close()` waits for the backlog and raises the writer's error, if any; `seconds` is the time
    spent inside `write`.
    """

    def __init__(self, write: Callable[[Any], None], *, depth: int = 8):
        self._write = write
        self._buffer: queue.Queue = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self.seconds = 0.0
        self._thread = threading.Thread(  # in a copy of the caller's context, as read_ahead
            target=contextvars.copy_context().run, args=(self._run,), name="video-write-behind", daemon=True
        )
        self._thread.start()

    def submit(self, item: Any) -> None:
        while True:
            if self._error is not None:
                raise self._error
            try:
                self._buffer.put(item, timeout=_POLL_S)
                return
            except queue.Full:
                continue

    def close(self) -> None:
        if self._thread.is_alive():
            self._buffer.put(_DONE)
            self._thread.join()
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        while True:
            item = self._buffer.get()
            if item is _DONE:
                return
            if self._error is not None:
                continue  # drain without writing after a failure
            started = time.perf_counter()
            try:
                self._write(item)
            except BaseException as exc:  # noqa: BLE001 - raised again by submit/close
                self._error = exc
            self.seconds += time.perf_counter() - started
