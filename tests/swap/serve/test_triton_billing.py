"""Billing under VISAGE_INFERENCE=triton: a job is billed the model work it caused on the server
(swap.inference.clock), not the RPC's round trip: within 2× of the same job's local model time.

The stand-in models are a few additions each: every call's fixed costs (gRPC, the Python backend's
IPC) would dwarf them, which is the 40× of issue 31. Here inswapper does real work too (a
convolution chain whose result is added as zero), so the job's model time is the models' work,
as with the real models.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from swap.config import PipelineConfig
from swap.inference import clock, triton_client
from swap.inference.sessions import clear_sessions
from swap.pipeline import Pipeline
from swap.serve import launcher
from swap.types import SwapOptions
from tests.helpers.standin_inputs import CPU, textured_frame
from tests.helpers.triton_models import remote, write_models
from tests.helpers.triton_venv import triton_venv

pytestmark = pytest.mark.timeout(900)

JOBS = 5


def add_work(path: Path, channels: int = 32, layers: int = 4) -> None:
    """Give `path`'s model real compute on its first (NCHW) input: a chain of 3×3 convolutions
    whose sum, times zero, is added to its first output (results unchanged). New initializers go
    before the others (inswapper's emap must stay the last one)."""
    model = onnx.load(str(path))
    graph = model.graph
    rng = np.random.default_rng(3)
    source, out = graph.input[0].name, graph.output[0].name
    for node in graph.node:  # the first output is now an intermediate
        node.output[:] = [f"{out}_raw" if o == out else o for o in node.output]
    weights, nodes, previous, width = [], [], source, 3
    for layer in range(layers):
        w = rng.standard_normal((channels, width, 3, 3)).astype(np.float32) * 0.1
        weights.append(numpy_helper.from_array(w, f"work_w{layer}"))
        nodes.append(helper.make_node("Conv", [previous, f"work_w{layer}"], [f"work{layer}"], pads=[1, 1, 1, 1]))
        previous, width = f"work{layer}", channels
    weights.append(numpy_helper.from_array(np.zeros(1, np.float32), "work_zero"))
    nodes += [
        helper.make_node("ReduceSum", [previous], ["work_sum"], keepdims=1),
        helper.make_node("Mul", ["work_sum", "work_zero"], ["work_nothing"]),
        helper.make_node("Add", [f"{out}_raw", "work_nothing"], [out]),
    ]
    graph.node.extend(nodes)
    kept = list(graph.initializer)
    del graph.initializer[:]
    graph.initializer.extend([*weights, *kept])
    assert graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    onnx.save(model, str(path))


@pytest.fixture(scope="module")
def triton(tmp_path_factory):
    venv = triton_venv()
    models_dir = tmp_path_factory.mktemp("models")
    write_models(models_dir)
    add_work(models_dir / "inswapper_128.onnx")
    work = tmp_path_factory.mktemp("triton")
    served = launcher.build_repository(models_dir, work)
    ports = (launcher.free_port(), launcher.free_port(), launcher.free_port())
    process = launcher.start(
        work / "repository", venv=venv, work_dir=work, ports=ports, models=served, intra_op_threads=1
    )
    try:
        process.wait_ready(timeout_s=300)
        yield models_dir, process
    finally:
        process.stop()
        triton_client.clear()
        clear_sessions()


def _job_ms(pipeline: Pipeline, frame: np.ndarray) -> float:
    """Model time billed for one job (source analysis + the swap of one frame), in ms."""
    source = pipeline.prepare_source([frame])
    result = pipeline.swap_frame(source, frame, SwapOptions(enhance=True))
    return source.inference_ms + result.inference_ms


def test_a_triton_job_is_billed_its_model_work_not_the_round_trip(triton):
    models_dir, process = triton
    config = PipelineConfig(models_dir=models_dir, runtime=CPU, detector="yoloface_8n", landmarker="2dfan4")
    local = Pipeline(config)
    served = Pipeline(replace(config, runtime=remote(process)))
    frame = np.full((960, 1280, 3), (230, 100, 20), np.uint8)
    frame[:480, :640] = textured_frame(480, 640)
    for pipeline in (local, served):
        pipeline.warm_up()
        _job_ms(pipeline, frame)  # first runs (allocations) are not the job's
    local_ms = float(np.median([_job_ms(local, frame) for _ in range(JOBS)]))
    triton_ms = float(np.median([_job_ms(served, frame) for _ in range(JOBS)]))
    assert local_ms > 0 and triton_ms > 0
    ratio = triton_ms / local_ms
    print(f"billed per job: local {local_ms:.2f} ms, triton {triton_ms:.2f} ms, ratio {ratio:.2f}")
    # Within 2x: billing the round trip was 40x (issue 31). Alone the ratio is 0.93-1.01 here; in
    # a full run on the 2-core machine it measured 1.58 once (12.3 ms local, 19.4 ms Triton: the
    # stub's CPU clock under contention; not explained: without ORT's spinning the same).
    assert 1 / 2 <= ratio <= 2, (local_ms, triton_ms)


def test_without_the_stand_ins_compute_output_a_run_bills_its_share_of_tritons_statistics(triton):
    """NVIDIA's ONNX Runtime backend declares no `visage_compute_ns`: a run is billed its items
    times the model version's compute per item in Triton's statistics (input + infer + output)."""
    _, process = triton
    session = triton_client.triton_session("arcface_w600k_r50", process.grpc_url)
    assert session.reports_compute  # the stand-in's config declares it
    feeds = {session.get_inputs()[0].name: np.full((3, 3, 112, 112), 0.5, np.float32)}
    session.run(None, feeds)  # statistics to read
    session.reports_compute = False  # as against NVIDIA's Triton

    with clock.session() as frame_clock:
        with clock.measure("arcface_w600k_r50", "triton"):
            session.run(None, feeds)  # then reads the statistics, this run included

    stats = session.connection._call("x", "get_inference_statistics", session.triton_name, "1")
    (entry,) = [e for e in stats["model_stats"] if e["version"] == "1"]
    spent = sum(int(b[p]["ns"]) for b in entry["batch_stats"] for p in triton_client.COMPUTE_PARTS)
    items = sum(int(b["batch_size"]) * int(b["compute_infer"]["count"]) for b in entry["batch_stats"])
    assert items >= 6  # both runs above, 3 faces each (and any earlier test's)
    assert frame_clock.inference_ms == pytest.approx(3 * spent / items / 1e6)
