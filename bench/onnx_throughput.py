"""Swapper throughput at batch 1, 4 and 16: faces per second and median ms per run.

Real weights cannot be downloaded here, so the bench generates an inswapper-SHAPED stand-in
(same inputs `target` [N,3,128,128] + `source` [N,512], output [N,3,128,128], `emap` as the
last initializer) with inswapper's layout: an encoder down to 32×32, `--blocks` residual
blocks whose conv bias is modulated by the source latent, and a decoder back to 128×128.
The published inswapper_128 is ~554 MB of fp32 weights, consistent with 1024-channel blocks
at 32×32; its exact FLOPs were not verified offline. The default `--width 256` stand-in is
~36 MB and ~10.6 GMAC per face (printed at start) so a 2-core CPU finishes in under a minute;
run `--width 1024` on a GPU host to approximate the real model's weight size and compute.

    python bench/onnx_throughput.py
    python bench/onnx_throughput.py --providers CUDAExecutionProvider --width 1024
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swap import align
from swap.config import RuntimeOptions
from swap.inference.runs import warm_up
from swap.inference.sessions import get_session
from swap.swappers.inswapper import InswapperSwapper
from swap.types import Face, SourceIdentity


def _conv(name, x, cin, cout, k, stride, rng, inits, nodes, macs, hw_out):
    weight = (rng.standard_normal((cout, cin, k, k)) * (1.0 / np.sqrt(cin * k * k))).astype(np.float32)
    inits.append(numpy_helper.from_array(weight, f"{name}_w"))
    inits.append(numpy_helper.from_array(np.zeros(cout, np.float32), f"{name}_b"))
    nodes.append(
        helper.make_node(
            "Conv",
            [x, f"{name}_w", f"{name}_b"],
            [name],
            kernel_shape=[k, k],
            strides=[stride, stride],
            pads=[k // 2] * 4,
        )
    )
    macs.append(cin * cout * k * k * hw_out * hw_out)
    return name


def build_stand_in(path: Path, width: int = 256, blocks: int = 6, seed: int = 0) -> tuple[Path, float]:
    """Write the stand-in model; return (path, GMAC per face)."""
    rng = np.random.default_rng(seed)
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []
    macs: list[int] = []
    quarter = max(width // 4, 16)
    half = max(width // 2, 32)
    x = _conv("enc1", "target", 3, quarter, 7, 1, rng, inits, nodes, macs, 128)
    nodes.append(helper.make_node("Relu", [x], ["enc1_r"]))
    x = _conv("enc2", "enc1_r", quarter, half, 3, 2, rng, inits, nodes, macs, 64)
    nodes.append(helper.make_node("Relu", [x], ["enc2_r"]))
    x = _conv("enc3", "enc2_r", half, width, 3, 2, rng, inits, nodes, macs, 32)
    nodes.append(helper.make_node("Relu", [x], ["h0"]))
    inits.append(numpy_helper.from_array(np.array([0, width, 1, 1], dtype=np.int64), "style_shape"))
    h = "h0"
    for b in range(blocks):
        # The source latent modulates each block (inswapper uses AdaIN; a bias is enough for cost).
        style_w = (rng.standard_normal((512, width)) * 0.02).astype(np.float32)
        inits.append(numpy_helper.from_array(style_w, f"style{b}_w"))
        nodes.append(helper.make_node("MatMul", ["source", f"style{b}_w"], [f"style{b}"]))
        nodes.append(helper.make_node("Reshape", [f"style{b}", "style_shape"], [f"style{b}_4d"]))
        c1 = _conv(f"blk{b}a", h, width, width, 3, 1, rng, inits, nodes, macs, 32)
        nodes.append(helper.make_node("Add", [c1, f"style{b}_4d"], [f"blk{b}a_s"]))
        nodes.append(helper.make_node("Relu", [f"blk{b}a_s"], [f"blk{b}a_r"]))
        c2 = _conv(f"blk{b}b", f"blk{b}a_r", width, width, 3, 1, rng, inits, nodes, macs, 32)
        nodes.append(helper.make_node("Add", [h, c2], [f"h{b + 1}"]))
        h = f"h{b + 1}"
    inits.append(numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "up_scales"))
    nodes.append(helper.make_node("Resize", [h, "", "up_scales"], ["up1"], mode="nearest"))
    x = _conv("dec1", "up1", width, half, 3, 1, rng, inits, nodes, macs, 64)
    nodes.append(helper.make_node("Relu", [x], ["dec1_r"]))
    nodes.append(helper.make_node("Resize", ["dec1_r", "", "up_scales"], ["up2"], mode="nearest"))
    x = _conv("dec2", "up2", half, quarter, 3, 1, rng, inits, nodes, macs, 128)
    nodes.append(helper.make_node("Relu", [x], ["dec2_r"]))
    x = _conv("dec3", "dec2_r", quarter, 3, 7, 1, rng, inits, nodes, macs, 128)
    nodes.append(helper.make_node("Sigmoid", [x], ["output"]))
    inits.append(numpy_helper.from_array(rng.standard_normal((512, 512)).astype(np.float32) * 0.05, "emap"))
    graph = helper.make_graph(
        nodes,
        "inswapper_stand_in",
        [
            helper.make_tensor_value_info("target", TensorProto.FLOAT, ["N", 3, 128, 128]),
            helper.make_tensor_value_info("source", TensorProto.FLOAT, ["N", 512]),
        ],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 3, 128, 128])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    onnx.save(model, str(path))
    return path, sum(macs) / 1e9


def time_runs(session, batch: int, runs: int) -> list[float]:
    rng = np.random.default_rng(1)
    feeds = {
        "target": rng.random((batch, 3, 128, 128), dtype=np.float32),
        "source": rng.standard_normal((batch, 512)).astype(np.float32),
    }
    session.run(None, feeds)  # first run at a new shape allocates; keep it out of the figures
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(None, feeds)  # returns host arrays: includes the device sync
        times.append(time.perf_counter() - start)
    return times


def time_frames(swapper: InswapperSwapper, faces_per_frame: int, runs: int) -> list[float]:
    """End to end on a 1920×1080 frame: warp N crops, one model run, N paste-backs."""
    frame = np.random.default_rng(2).integers(0, 256, (1080, 1920, 3), dtype=np.uint8)
    faces = []
    for i in range(faces_per_frame):
        x, y = 40 + (i % 8) * 230, 60 + (i // 8) * 500
        points = align.template_points("arcface_128", 128) * 1.6 + np.float32([x, y])
        faces.append(Face(box=np.float32([x, y, x + 205, y + 205]), score=1.0, landmarks_5=points))
    embedding = np.random.default_rng(3).standard_normal(512).astype(np.float32)
    source = SourceIdentity(image=frame, face=faces[0], embedding=embedding, embedding_kind="arcface512")
    swapper.swap(source, frame, faces)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        swapper.swap(source, frame, faces)
        times.append(time.perf_counter() - start)
    return times


def report(label: str, batch: int, times: list[float]) -> None:
    median = statistics.median(times)
    print(
        f"{label:<28} batch {batch:>2}: {batch / median:8.1f} faces/s   median {median * 1000:8.1f} ms/run   ({len(times)} runs)"
    )


def onnx_throughput(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--providers",
        default="CPUExecutionProvider",
        help="comma-separated onnxruntime providers, in preference order",
    )
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0 = onnxruntime default)")
    parser.add_argument(
        "--width", type=int, default=256, help="channels of the 32×32 blocks (real inswapper: ~1024)"
    )
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--batches", default="1,4,16")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-frames", action="store_true", help="only time the model, not warp + paste")
    args = parser.parse_args(argv)

    options = RuntimeOptions(
        providers=[p.strip() for p in args.providers.split(",") if p.strip()],
        device_id=args.device_id,
        intra_op_threads=args.threads,
    )
    with tempfile.TemporaryDirectory() as tmp:
        path, gmac = build_stand_in(Path(tmp) / "inswapper_128.onnx", args.width, args.blocks)
        size_mb = path.stat().st_size / 1e6
        session = get_session(path, options)
        warm_up(session)
        print(f"stand-in: width {args.width}, {args.blocks} blocks, {size_mb:.0f} MB, {gmac:.2f} GMAC/face")
        print(f"providers requested {options.providers}; session uses {session.get_providers()}")
        batches = [int(b) for b in args.batches.split(",")]
        for batch in batches:
            report("model run", batch, time_runs(session, batch, args.runs))
        if not args.skip_frames:
            swapper = InswapperSwapper(path, options, max_batch=max(batches))
            for batch in batches:
                report(
                    "frame: warp+run+paste 1080p", batch, time_frames(swapper, batch, max(2, args.runs // 2))
                )


if __name__ == "__main__":
    onnx_throughput()
