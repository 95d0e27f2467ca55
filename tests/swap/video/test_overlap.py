"""Read-ahead / side-by-side / write-behind threads of the video loop: order kept, errors surface,
early stop is clean."""

from __future__ import annotations

import contextvars
import threading
import time

import pytest

from swap.video.overlap import WriteBehind, ordered_map, read_ahead


def counted(count: int, taken: list[int]):
    """0 .. count-1, each appended to `taken` as it is handed out."""
    for i in range(count):
        taken.append(i)
        yield i


def test_read_ahead_keeps_order_and_reads_ahead():
    produced = []
    frames = read_ahead(counted(50, produced), depth=4)
    assert next(frames) == 0
    deadline = time.monotonic() + 30
    while len(produced) < 2 and time.monotonic() < deadline:  # the producer runs ahead on its own thread
        time.sleep(0.005)
    assert len(produced) > 1
    assert [0, *frames] == list(range(50))


def test_read_ahead_raises_the_producers_error_after_the_good_items():
    def items():
        yield 1
        yield 2
        raise ValueError("truncated stream")

    got = []
    with pytest.raises(ValueError, match="truncated stream"):
        for item in read_ahead(items()):
            got.append(item)
    assert got == [1, 2]


def test_stopping_early_stops_the_producer():
    finished = threading.Event()

    def endless():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            finished.set()

    frames = read_ahead(endless(), depth=2)
    assert [next(frames) for _ in range(3)] == [0, 1, 2]
    frames.close()
    # A liveness wait, not a timing check: generous, so a loaded machine cannot fail it.
    assert finished.wait(30), "the producer thread kept running after the consumer stopped"


def test_stopping_a_chain_early_stops_every_stage():
    """decode -> track -> the swap loop: closing the last stage stops the first one's thread too."""
    finished = threading.Event()

    def endless():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            finished.set()

    def doubled(items):
        for item in items:
            yield 2 * item

    frames = read_ahead(doubled(read_ahead(endless(), depth=2)), depth=2)
    assert [next(frames) for _ in range(3)] == [0, 2, 4]
    frames.close()
    assert finished.wait(5), "the first stage kept running after the last one stopped"


def test_write_behind_writes_everything_in_order_before_close_returns():
    written = []

    def slow_write(item):
        time.sleep(0.002)
        written.append(item)

    encoder = WriteBehind(slow_write, depth=3)
    for i in range(40):
        encoder.submit(i)
    encoder.close()
    assert written == list(range(40))
    assert encoder.seconds > 0


def test_write_behind_surfaces_the_writers_error():
    def failing_write(item):
        if item == 3:
            raise OSError("disk full")

    encoder = WriteBehind(failing_write, depth=2)
    with pytest.raises(OSError, match="disk full"):
        for i in range(100):
            encoder.submit(i)
        encoder.close()


def test_ordered_map_runs_items_side_by_side_and_keeps_their_order():
    # Both of the first two items must be running at once to pass the barrier (a liveness wait,
    # not a timing check); later items finish in scrambled order and still come out in order.
    barrier = threading.Barrier(2, timeout=30)
    threads = set()

    def work(i):
        threads.add(threading.current_thread().name)
        if i < 2:
            barrier.wait()
        time.sleep(0.002 * ((7 * i) % 5))
        return i * i

    assert list(ordered_map(work, range(40), workers=2)) == [i * i for i in range(40)]
    assert len(threads) == 2


def test_ordered_map_raises_at_the_failing_items_place():
    def work(i):
        if i == 5:
            raise ValueError("bad frame 5")
        return i

    got = []
    with pytest.raises(ValueError, match="bad frame 5"):
        for item in ordered_map(work, range(20), workers=3):
            got.append(item)
    assert got == [0, 1, 2, 3, 4]


def test_ordered_map_stopped_early_takes_only_a_few_items_ahead():
    taken = []
    results = ordered_map(lambda i: i, counted(1000, taken), workers=2)
    assert [next(results) for _ in range(3)] == [0, 1, 2]
    results.close()
    assert len(taken) <= 3 + 3  # what was consumed, and at most workers + 1 ahead


def test_ordered_map_with_one_worker_runs_on_the_callers_thread():
    caller = threading.current_thread()
    assert list(ordered_map(lambda i: threading.current_thread() is caller, range(3), workers=1)) == [True] * 3


def test_ordered_map_runs_each_call_in_the_callers_context():
    job = contextvars.ContextVar("job", default=None)
    job.set("job-42")  # e.g. the worker's log context: lines logged during a swap name their job
    assert set(ordered_map(lambda i: job.get(), range(6), workers=2)) == {"job-42"}


def test_read_ahead_and_write_behind_run_in_the_callers_context():
    """The decode and tracking thread (read_ahead) and the encoder's (WriteBehind) log with the
    job's context, as the swap threads do."""
    job = contextvars.ContextVar("job", default=None)
    job.set("job-42")
    assert set(read_ahead(job.get() for _ in range(5))) == {"job-42"}
    seen = []
    encoder = WriteBehind(lambda item: seen.append(job.get()))
    for i in range(5):
        encoder.submit(i)
    encoder.close()
    assert seen == ["job-42"] * 5
