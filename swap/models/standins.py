"""Tiny ONNX stand-ins for the real models, generated with onnx.helper (a core dependency), for the
tests and the benchmarks (bench/ never imports tests/).

Same tensor names and shapes as FaceFusion's exports, a dynamic batch dimension N (or a fixed
1 where asked), and outputs that are a KNOWN function of the inputs, so tests can assert on
pasted-back pixels and decoded boxes:

- inswapper: output R = 1 − target B, G = target G, B = source[:, 0] (the latent's first value); the
  graph's last initializer is `emap`.
- arcface: output[:, :3] = per-channel means of the input (in input channel order), rest 0.
- gfpgan / codeformer: output = input with channel 0 (R) set to −1 (codeformer: to
  2·weight − 1).
- yoloface: a constant [1, 20, 8400] table, except anchor 0's score = input[0, 0, 0, 0]
  (the top-left pixel's first channel / 255: B when the adapter feeds BGR).
- 2dfan4: constant landmarks [N, 68, 3] and heatmaps [N, 68, 64, 64] with a chosen peak.
- hyperswap / ghost: R = source[:, 0], G = target G, B = −target R; crossface: input @ a matrix.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 9  # old enough for every onnxruntime we support


def _save(graph: onnx.GraphProto, path: Path) -> Path:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION)
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def _zero_per_item(
    input_name: str, out: str, rank: int
) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    """Nodes computing 0 · sum(input) with shape [N, 1, …] of `rank` dims: ties an output's batch
    size (and graph dependency) to the input without changing its value."""
    inits = [
        numpy_helper.from_array(np.array([1, 2, 3], dtype=np.int64), f"{out}_axes"),
        numpy_helper.from_array(np.array([0.0], dtype=np.float32), f"{out}_zero"),
        numpy_helper.from_array(np.array([-1] + [1] * (rank - 1), dtype=np.int64), f"{out}_shape"),
    ]
    nodes = [
        helper.make_node("ReduceSum", [input_name, f"{out}_axes"], [f"{out}_sum"], keepdims=1),
        helper.make_node("Mul", [f"{out}_sum", f"{out}_zero"], [f"{out}_zsum"]),
        helper.make_node("Reshape", [f"{out}_zsum", f"{out}_shape"], [out]),
    ]
    return nodes, inits


def make_inswapper(
    path: Path, *, emap: np.ndarray | None = None, batch: str | int = "N", fp16_io: bool = False
) -> Path:
    """inswapper_128 stand-in. `emap` (512×512) becomes the LAST initializer."""
    dtype = TensorProto.FLOAT16 if fp16_io else TensorProto.FLOAT
    target = helper.make_tensor_value_info("target", dtype, [batch, 3, 128, 128])
    source = helper.make_tensor_value_info("source", dtype, [batch, 512])
    output = helper.make_tensor_value_info("output", dtype, [batch, 3, 128, 128])
    np_dtype = np.float16 if fp16_io else np.float32
    inits = [
        numpy_helper.from_array(np.array([0], dtype=np.int64), "zero_i"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "one_i"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "two_i"),
        numpy_helper.from_array(np.array([3], dtype=np.int64), "three_i"),
        numpy_helper.from_array(np.array([-1, 1, 1, 1], dtype=np.int64), "latent_shape"),
        numpy_helper.from_array(np.array([1.0], dtype=np_dtype), "one_f"),
    ]
    nodes = [
        # G passes through.
        helper.make_node("Slice", ["target", "one_i", "two_i", "one_i"], ["green"]),
        # R = 1 − input B: exposes the input channel order.
        helper.make_node("Sub", ["green", "green"], ["zeros"]),
        helper.make_node("Slice", ["target", "two_i", "three_i", "one_i"], ["blue_in"]),
        helper.make_node("Sub", ["one_f", "blue_in"], ["red"]),
        # B = source[:, 0] broadcast over the plane.
        helper.make_node("Slice", ["source", "zero_i", "one_i", "one_i"], ["latent0"]),
        helper.make_node("Reshape", ["latent0", "latent_shape"], ["latent0_4d"]),
        helper.make_node("Add", ["zeros", "latent0_4d"], ["blue"]),
        helper.make_node("Concat", ["red", "green", "blue"], ["output"], axis=1),
    ]
    if emap is None:
        emap = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    inits.append(numpy_helper.from_array(emap.astype(np_dtype), "emap"))  # last, like the real model
    graph = helper.make_graph(nodes, "inswapper_stub", [target, source], [output], initializer=inits)
    return _save(graph, path)


def make_arcface(path: Path, *, batch: str | int = "N") -> Path:
    image = helper.make_tensor_value_info("input.1", TensorProto.FLOAT, [batch, 3, 112, 112])
    embedding = helper.make_tensor_value_info("683", TensorProto.FLOAT, [batch, 512])
    inits = [numpy_helper.from_array(np.array([0, 0, 0, 509], dtype=np.int64), "pads")]
    nodes = [
        helper.make_node("ReduceMean", ["input.1"], ["means"], axes=[2, 3], keepdims=0),  # opset < 18 form
        helper.make_node("Pad", ["means", "pads"], ["683"], mode="constant"),
    ]
    graph = helper.make_graph(nodes, "arcface_stub", [image], [embedding], initializer=inits)
    return _save(graph, path)


def make_matmul_chain(path: Path, *, side: int = 512, depth: int = 4) -> Path:
    """Not a stand-in: `depth` [N, side] × [side, side] products, enough arithmetic per run for
    onnxruntime to share it with its intra-op thread pool (the billed-CPU-time tests)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", side])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", side])
    weight = (np.random.default_rng(0).standard_normal((side, side)) / np.sqrt(side)).astype(np.float32)
    inits = [numpy_helper.from_array(weight, "w")]
    names = ["x", *(f"h{i}" for i in range(1, depth)), "y"]
    nodes = [helper.make_node("MatMul", [a, "w"], [b]) for a, b in itertools.pairwise(names)]
    graph = helper.make_graph(nodes, "matmul_chain", [x], [y], initializer=inits)
    return _save(graph, path)


def _enhancer_nodes(red_from: str) -> list[onnx.NodeProto]:
    return [
        helper.make_node("Slice", ["input", "one_i", "three_i", "one_i"], ["gb"]),
        helper.make_node("Slice", ["input", "zero_i", "one_i", "one_i"], ["r_in"]),
        helper.make_node("Sub", ["r_in", "r_in"], ["r_zero"]),
        helper.make_node("Add", ["r_zero", red_from], ["r_out"]),
        helper.make_node("Concat", ["r_out", "gb"], ["output"], axis=1),
    ]


def _enhancer_inits() -> list[onnx.TensorProto]:
    return [
        numpy_helper.from_array(np.array([0], dtype=np.int64), "zero_i"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "one_i"),
        numpy_helper.from_array(np.array([3], dtype=np.int64), "three_i"),
        numpy_helper.from_array(np.array([-1.0], dtype=np.float32), "minus_one"),
        numpy_helper.from_array(np.array([2.0], dtype=np.float32), "two_f"),
        numpy_helper.from_array(np.array([1.0], dtype=np.float32), "one_f"),
    ]


def make_gfpgan(path: Path, *, batch: str | int = "N", size: int = 512) -> Path:
    image = helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, size, size])
    output = helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch, 3, size, size])
    graph = helper.make_graph(
        _enhancer_nodes("minus_one"), "gfpgan_stub", [image], [output], initializer=_enhancer_inits()
    )
    return _save(graph, path)


def make_codeformer(path: Path, *, batch: str | int = "N", size: int = 512) -> Path:
    image = helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, size, size])
    weight = helper.make_tensor_value_info("weight", TensorProto.DOUBLE, [1])
    output = helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch, 3, size, size])
    nodes = [
        helper.make_node("Cast", ["weight"], ["weight_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["weight_f", "two_f"], ["weight_2"]),
        helper.make_node("Sub", ["weight_2", "one_f"], ["red_value"]),
        *_enhancer_nodes("red_value"),
    ]
    graph = helper.make_graph(
        nodes, "codeformer_stub", [image, weight], [output], initializer=_enhancer_inits()
    )
    return _save(graph, path)


def yoloface_table(rows: list[dict]) -> np.ndarray:
    """[1, 20, 8400] table; each row dict: anchor, cx, cy, w, h, score, kps (5×2), placed at `anchor`."""
    table = np.zeros((1, 20, 8400), dtype=np.float32)
    for row in rows:
        column = np.zeros(20, dtype=np.float32)
        column[:5] = [row["cx"], row["cy"], row["w"], row["h"], row["score"]]
        kps = np.asarray(row["kps"], dtype=np.float32).reshape(5, 2)
        column[5:] = np.concatenate([kps, np.ones((5, 1), np.float32)], axis=1).ravel()
        table[0, :, row["anchor"]] = column
    return table


def make_yoloface(path: Path, table: np.ndarray, *, score_from_input_anchor: int | None = 0) -> Path:
    """Constant detection table; anchor `score_from_input_anchor` takes its score from input[0,0,0,0]."""
    image = helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 640, 640])
    output = helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 20, 8400])
    onehot = np.zeros((1, 20, 8400), dtype=np.float32)
    if score_from_input_anchor is not None:
        onehot[0, 4, score_from_input_anchor] = 1.0
    table = table.copy()
    if score_from_input_anchor is not None:
        table[0, 4, score_from_input_anchor] = 0.0
    inits = [
        numpy_helper.from_array(table, "table"),
        numpy_helper.from_array(onehot, "onehot"),
        numpy_helper.from_array(np.array([0, 0, 0, 0], dtype=np.int64), "starts"),
        numpy_helper.from_array(np.array([1, 1, 1, 1], dtype=np.int64), "ends"),
    ]
    nodes = [
        helper.make_node("Slice", ["input", "starts", "ends"], ["pixel"]),  # [1,1,1,1]
        helper.make_node("Squeeze", ["pixel"], ["pixel_scalar"]),
        helper.make_node("Mul", ["onehot", "pixel_scalar"], ["score_plane"]),
        helper.make_node("Add", ["table", "score_plane"], ["output0"]),
    ]
    graph = helper.make_graph(nodes, "yoloface_stub", [image], [output], initializer=inits)
    return _save(graph, path)


def make_2dfan4(path: Path, points_64: np.ndarray, *, peak: float = 0.9, batch: str | int = "N") -> Path:
    """Constant landmarks (68×2 on the 64 grid) and heatmaps whose every peak is `peak`."""
    image = helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, 256, 256])
    landmarks = helper.make_tensor_value_info("landmarks", TensorProto.FLOAT, [batch, 68, 3])
    heatmaps = helper.make_tensor_value_info("heatmaps", TensorProto.FLOAT, [batch, 68, 64, 64])
    points = np.concatenate(
        [np.asarray(points_64, np.float32).reshape(68, 2), np.ones((68, 1), np.float32)], axis=1
    )
    heat = np.zeros((1, 68, 64, 64), dtype=np.float32)
    heat[0, :, 10, 10] = peak
    zero3, inits3 = _zero_per_item("input", "zero3", 3)
    zero4, inits4 = _zero_per_item("input", "zero4", 4)
    inits = [
        *inits3,
        *inits4,
        numpy_helper.from_array(points[None], "points"),
        numpy_helper.from_array(heat, "heat"),
    ]
    nodes = [
        *zero3,
        *zero4,
        helper.make_node("Add", ["points", "zero3"], ["landmarks"]),
        helper.make_node("Add", ["heat", "zero4"], ["heatmaps"]),
    ]
    graph = helper.make_graph(nodes, "2dfan4_stub", [image], [landmarks, heatmaps], initializer=inits)
    return _save(graph, path)


def make_xseg(path: Path, *, batch: str | int = "N") -> Path:
    """xseg stand-in: input [N, 256, 256, 3] channels-last; output [N, 256, 256, 1] = input channel 0
    (B when fed BGR), so a crop's blue channel says where the 'face' is."""
    image = helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 256, 256, 3])
    output = helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch, 256, 256, 1])
    inits = [
        numpy_helper.from_array(np.array([0], dtype=np.int64), "zero_i"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "one_i"),
        numpy_helper.from_array(np.array([3], dtype=np.int64), "axis_i"),
    ]
    nodes = [helper.make_node("Slice", ["input", "zero_i", "one_i", "axis_i"], ["output"])]
    graph = helper.make_graph(nodes, "xseg_stub", [image], [output], initializer=inits)
    return _save(graph, path)


def make_bisenet(path: Path, *, batch: str | int = "N") -> Path:
    """bisenet stand-in: input [N, 3, 512, 512]; output [N, 19, 512, 512] where class 1 (skin) scores
    the input's channel 0 (normalised R when fed RGB), class 17 (hair) scores a constant 0.5 and the
    rest −10: 'skin' wherever (R / 255 − 0.485) / 0.229 > 0.5, i.e. R > ~153."""
    image = helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, 512, 512])
    output = helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch, 19, 512, 512])
    base = np.full((1, 19, 1, 1), -10.0, np.float32)
    base[0, 17] = 0.5
    onehot = np.zeros((1, 19, 1, 1), np.float32)
    onehot[0, 1] = 1.0
    base[0, 1] = 0.0
    inits = [
        numpy_helper.from_array(np.array([0], dtype=np.int64), "zero_i"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "one_i"),
        numpy_helper.from_array(base, "base"),
        numpy_helper.from_array(onehot, "onehot"),
    ]
    nodes = [
        helper.make_node("Slice", ["input", "zero_i", "one_i", "one_i"], ["red"]),  # [N,1,512,512]
        helper.make_node("Mul", ["red", "onehot"], ["skin_plane"]),  # [N,19,512,512]
        helper.make_node("Add", ["skin_plane", "base"], ["output"]),
    ]
    graph = helper.make_graph(nodes, "bisenet_stub", [image], [output], initializer=inits)
    return _save(graph, path)


def make_hyperswap(path: Path, *, batch: str | int = "N") -> Path:
    """hyperswap_1a_256 stand-in: `target` [N, 3, 256, 256], `source` [N, 512] -> `output` with
    ch0 (R) = source[:, 0], ch1 (G) = target G, ch2 (B) = −target R (all in the (x − .5) / .5 scale)."""
    return _make_swapper_256(path, "hyperswap_stub", batch)


def make_ghost(path: Path, *, batch: str | int = "N") -> Path:
    """ghost_N_256 stand-in: the same tensors and function as make_hyperswap (`target`
    [N, 3, 256, 256] in (x − .5) / .5, `source` [N, 512], output 0 in the target's scale)."""
    return _make_swapper_256(path, "ghost_stub", batch)


def make_crossface(path: Path, matrix: np.ndarray) -> Path:
    """crossface_ghost stand-in: `input` [1, 512] -> `output` [1, 512] = input @ matrix."""
    embedding = helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 512])
    output = helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 512])
    inits = [numpy_helper.from_array(np.asarray(matrix, np.float32), "matrix")]
    nodes = [helper.make_node("MatMul", ["input", "matrix"], ["output"])]
    graph = helper.make_graph(nodes, "crossface_stub", [embedding], [output], initializer=inits)
    return _save(graph, path)


def _make_swapper_256(path: Path, graph_name: str, batch: str | int) -> Path:
    target = helper.make_tensor_value_info("target", TensorProto.FLOAT, [batch, 3, 256, 256])
    source = helper.make_tensor_value_info("source", TensorProto.FLOAT, [batch, 512])
    output = helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch, 3, 256, 256])
    inits = [
        numpy_helper.from_array(np.array([0], dtype=np.int64), "zero_i"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "one_i"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "two_i"),
        numpy_helper.from_array(np.array([-1, 1, 1, 1], dtype=np.int64), "latent_shape"),
    ]
    nodes = [
        helper.make_node("Slice", ["target", "one_i", "two_i", "one_i"], ["green"]),
        helper.make_node("Sub", ["green", "green"], ["zeros"]),
        helper.make_node("Slice", ["target", "zero_i", "one_i", "one_i"], ["red_in"]),
        helper.make_node("Neg", ["red_in"], ["blue"]),
        helper.make_node("Slice", ["source", "zero_i", "one_i", "one_i"], ["s0"]),
        helper.make_node("Reshape", ["s0", "latent_shape"], ["s0_4d"]),
        helper.make_node("Add", ["zeros", "s0_4d"], ["red"]),
        helper.make_node("Concat", ["red", "green", "blue"], ["output"], axis=1),
    ]
    graph = helper.make_graph(nodes, graph_name, [target, source], [output], initializer=inits)
    return _save(graph, path)
