"""The billed clock: a model call on the CPU costs the CPU time it consumed (the calling thread's
and its onnxruntime pool's), whatever else the process or the machine is doing; a call on an
accelerator costs its wall time. Observers hear wall time."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from swap.config import RuntimeOptions
from swap.inference import clock as inference_clock
from swap.inference.local import VersionedLocalSession
from swap.inference.runs import run_in_batches
from swap.inference.sessions import clear_sessions, get_session, pool_threads
from swap.models import standins as fx

REPO = Path(__file__).resolve().parents[3]
BLOCK = b"\x01" * 4_000_000  # hashlib releases the GIL while hashing this


def burn_cpu(seconds: float) -> None:
    """Hash until this thread has used `seconds` of CPU time."""
    start = time.thread_time()
    while time.thread_time() - start < seconds:
        hashlib.sha256(BLOCK).digest()


@pytest.fixture
def heard():
    calls = []

    def observer(model, provider, seconds, batch_size):
        calls.append((model, provider, seconds))

    inference_clock.add_observer(observer)
    yield calls
    inference_clock.remove_observer(observer)


def test_waiting_inside_a_cpu_call_is_not_billed_but_observers_hear_the_wall_time(heard):
    with inference_clock.session() as clock:
        with inference_clock.measure("dlib_hog", "dlib", 1):
            time.sleep(0.2)
    assert clock.inference_ms < 20  # sleeping uses (almost) no CPU
    ((_, _, wall_s),) = heard
    assert wall_s >= 0.2


def test_the_calling_threads_cpu_work_is_billed_in_full():
    thread_start = time.thread_time()
    with inference_clock.session() as clock:
        with inference_clock.measure():
            burn_cpu(0.2)
    used_ms = (time.thread_time() - thread_start) * 1000
    assert 0.9 * used_ms <= clock.inference_ms <= used_ms


def test_other_threads_cpu_work_during_a_call_is_not_billed():
    """A video's decoder and encoder threads work while the frame loop runs its models."""
    burnt, read = threading.Event(), threading.Event()

    def work() -> None:
        burn_cpu(0.3)
        burnt.set()
        read.wait()  # alive until its CPU time has been read

    busy = threading.Thread(target=work)
    with inference_clock.session() as clock:
        with inference_clock.measure("dlib_hog", "dlib", 1):
            busy.start()
            burnt.wait()
            busy_cpu_ms = inference_clock.thread_cpu_seconds(busy.native_id) * 1000
    read.set()
    busy.join()
    assert busy_cpu_ms >= 300
    assert clock.inference_ms < 0.1 * busy_cpu_ms


def test_a_call_on_an_accelerator_is_billed_its_wall_time(heard):
    with inference_clock.session() as clock:
        with inference_clock.measure("inswapper_128", "cuda", 1):
            time.sleep(0.1)
    ((_, _, wall_s),) = heard
    assert clock.inference_ms == pytest.approx(wall_s * 1000)
    assert clock.inference_ms >= 100


def threads_cpu_ms() -> dict[int, float]:
    """CPU time (ms) of each thread of this process now, by native id."""
    spent = {}
    for name in os.listdir("/proc/self/task"):
        try:
            spent[int(name)] = inference_clock.thread_cpu_seconds(int(name)) * 1000
        except OSError:  # the thread ended meanwhile
            continue
    return spent


def pool_billing_in_this_process(folder: str) -> dict:
    """20 runs of a 2-thread CPU session: what the clock billed, and the CPU time the calling
    thread, the session's pool and every other thread of the process used meanwhile (ms)."""
    options = RuntimeOptions(providers=["CPUExecutionProvider"], intra_op_threads=2)
    session = get_session(fx.make_matmul_chain(Path(folder) / "matmul_chain.onnx"), options)
    rows = np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32)
    run_in_batches(session, {"x": rows}, max_batch=256)  # first run: lazy initialisation
    pool = pool_threads(session)
    before = threads_cpu_ms()
    with inference_clock.session() as clock:
        for _ in range(20):
            run_in_batches(session, {"x": rows}, max_batch=256)
    after = threads_cpu_ms()
    used = {tid: after[tid] - before.get(tid, 0.0) for tid in after}
    caller = threading.get_native_id()
    return {
        "pool": len(pool),
        "spinning": session.get_session_options().get_session_config_entry("session.intra_op.allow_spinning"),
        "billed_ms": clock.inference_ms,
        "caller_ms": used.pop(caller),
        "pool_ms": sum(used.pop(tid, 0.0) for tid in pool),
        "other_threads_ms": {str(tid): ms for tid, ms in used.items()},
    }


def test_a_cpu_sessions_intra_op_pool_is_billed_with_the_calling_thread(tmp_path):
    """onnxruntime splits a run between the calling thread and its pool's threads: both are
    billed, and nothing else: the total equals the CPU time those threads used (every thread's
    time read from the kernel over the runs, in a fresh interpreter so that the session's pool is
    the one it made), and exceeds what the calling thread alone used. The process's other
    threads (numpy's and onnxruntime's own, idle here) are reported, not billed."""
    script = (
        "import json, sys; from tests.swap.inference.test_clock import pool_billing_in_this_process as m; "
        "print(json.dumps(m(sys.argv[1])))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], cwd=REPO, capture_output=True, text=True, check=True
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["pool"] == 1, figures  # two threads: the caller and one of the pool's
    assert figures["spinning"] == "0"
    worked_ms = figures["caller_ms"] + figures["pool_ms"]
    assert figures["billed_ms"] == pytest.approx(worked_ms, rel=0.1), figures
    assert figures["billed_ms"] > figures["caller_ms"] * 1.1, figures


def test_a_model_with_a_canary_is_billed_on_both_versions_pools(tmp_path):
    """Either version may run a call (the job's routing picks it)."""
    clear_sessions(tmp_path)
    options = RuntimeOptions(providers=["CPUExecutionProvider"], intra_op_threads=2)
    paths = {1: fx.make_matmul_chain(tmp_path / "1.onnx"), 2: fx.make_matmul_chain(tmp_path / "2.onnx")}
    versioned = VersionedLocalSession("matmul_chain", 1, paths, options)
    pools = [pool_threads(session) for session in versioned.sessions.values()]
    assert all(pools) and not pools[0] & pools[1]
    assert pool_threads(versioned) == pools[0] | pools[1]
    clear_sessions(tmp_path)


def test_a_session_made_elsewhere_has_no_known_pool():
    class OtherSession:  # e.g. a Triton client session: its model runs in another process
        pass

    assert pool_threads(OtherSession()) == frozenset()


def test_a_pool_thread_that_has_gone_never_fails_the_call():
    gone = threading.Thread(target=lambda: None)
    gone.start()
    gone.join()
    with inference_clock.session() as clock:
        with inference_clock.measure("m", "cpu", pool_threads={gone.native_id}):
            burn_cpu(0.01)
    assert clock.inference_ms >= 10
