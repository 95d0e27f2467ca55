"""dlib's face recognition ResNet as an ONNX graph, with the weights read from dlib's own .dat file.

`dlib_face_recognition_resnet_model_v1.dat` is a serialized `anet_type` of dlib's
`examples/dnn_face_recognition_ex.cpp`: a 29-layer ResNet over a 150x150 RGB face chip,
ending in a 128-d `fc_no_bias` (the descriptor; the metric loss adds nothing at inference).
`parse_resnet` reads that file with numpy, checking every layer against the known network;
`build_onnx` writes the same computation as an ONNX graph, so onnxruntime computes dlib's
descriptors (to float rounding) with its multi-threaded kernels.

dlib's serialization (dlib/serialize.h, dlib/dnn/core.h, dlib/dnn/layers.h, dlib/cuda/tensor.h):

- integers: a control byte (byte count in the low 4 bits, 0x80 = negative) and that many bytes
  of the magnitude, little-endian; bools: ASCII '0'/'1'; strings: an integer length and the bytes;
  floats: a 64-bit mantissa and a 16-bit exponent as two integers (value = m * 2**e).
- tensors: version 2, num_samples, k, nr, nc, then k*nr*nc*num_samples little-endian float32.
- a network nests outside in: each wrapper writes its version, then its whole subnetwork, then
  (for a computational layer) its own details. So the file holds every layer's version, outermost
  first, then the input layer, then the layers' details innermost first.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CHIP_SIZE = 150  # input_rgb_image_sized<150>
CHIP_PADDING = 0.25  # what compute_face_descriptor passes to get_face_chip_details
DESCRIPTOR_SIZE = 128
INPUT_NAME = "image"
OUTPUT_NAME = "descriptor"
OPSET = 17
IR_VERSION = 9


class DlibModelFormatError(ValueError):
    """The file is not dlib's face recognition ResNet (truncated, garbled, or another network)."""


# -- the network, outermost layer first (dnn_face_recognition_ex.cpp) --------------------------
#
#   block<N,stride>  = affine<con<N,3,3,1,1,relu<affine<con<N,3,3,stride,stride,SUBNET>>>>>
#   ares<N>          = relu<add_prev1<block<N,1,tag1<SUBNET>>>>
#   ares_down<N>     = relu<add_prev2<avg_pool<2,2,2,2,skip1<tag2<block<N,2,tag1<SUBNET>>>>>>>
#   anet = loss_metric<fc_no_bias<128,avg_pool_everything<ares_down<256>, ares<256> x2,
#          ares_down<256>, ares<128> x2, ares_down<128>, ares<64> x3, ares_down<64>, ares<32> x3,
#          max_pool<3,3,2,2,relu<affine<con<32,7,7,2,2,input_rgb_image_sized<150>>>>>>>>

Spec = tuple  # ("con", filters, size, stride) | ("affine",) | ("relu",) | ("max_pool", size, stride)
# | ("avg_pool", size, stride) (size 0: the whole image) | ("fc", outputs) | ("add_prev", tag)
# | ("tag", id) | ("skip", id)


def _block(n: int, stride: int) -> list[Spec]:
    return [("affine",), ("con", n, 3, 1), ("relu",), ("affine",), ("con", n, 3, stride)]


def _ares(n: int) -> list[Spec]:
    return [("relu",), ("add_prev", 1), *_block(n, 1), ("tag", 1)]


def _ares_down(n: int) -> list[Spec]:
    return [
        ("relu",),
        ("add_prev", 2),
        ("avg_pool", 2, 2),
        ("skip", 1),
        ("tag", 2),
        *_block(n, 2),
        ("tag", 1),
    ]


def _network() -> list[Spec]:
    """Every layer between the loss and the input, outermost first."""
    levels = (
        _ares_down(256)
        + _ares(256) * 2
        + _ares_down(256)
        + _ares(128) * 2
        + _ares_down(128)
        + _ares(64) * 3
        + _ares_down(64)
        + _ares(32) * 3
    )
    return [
        ("fc", DESCRIPTOR_SIZE),
        ("avg_pool", 0, 1),
        *levels,
        ("max_pool", 3, 2),
        ("relu",),
        ("affine",),
        ("con", 32, 7, 2),
    ]


NETWORK: tuple[Spec, ...] = tuple(_network())


# -- reading dlib's serialization ---------------------------------------------------------------


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = memoryview(data)
        self.pos = 0

    def fail(self, what: str) -> DlibModelFormatError:
        return DlibModelFormatError(f"not dlib's face recognition ResNet: {what} (at byte {self.pos})")

    def take(self, count: int) -> memoryview:
        if count < 0 or self.pos + count > len(self.data):
            raise self.fail(f"the file ends early (needs {count} more bytes)")
        chunk = self.data[self.pos : self.pos + count]
        self.pos += count
        return chunk

    def integer(self) -> int:
        control = self.take(1)[0]
        size = control & 0x0F
        if size == 0 or size > 8 or control & 0x70:
            raise self.fail(f"bad integer control byte {control:#04x}")
        value = int.from_bytes(self.take(size), "little")
        return -value if control & 0x80 else value

    def boolean(self) -> bool:
        char = self.take(1)[0]
        if char not in (ord("0"), ord("1")):
            raise self.fail(f"bad bool byte {char:#04x}")
        return char == ord("1")

    def string(self) -> str:
        size = self.integer()
        if not 0 <= size <= 256:
            raise self.fail(f"implausible string length {size}")
        try:
            return bytes(self.take(size)).decode("ascii")
        except UnicodeDecodeError:
            raise self.fail("a layer name that is not ASCII") from None

    def real(self) -> float:
        if self.pos < len(self.data) and self.data[self.pos] & 0x70:
            raise self.fail("a float in dlib's old text format")
        mantissa = self.integer()
        exponent = self.integer()
        if exponent >= 32000:  # float_details' inf / -inf / nan markers
            return {32000: float("inf"), 32001: float("-inf")}.get(exponent, float("nan"))
        return float(np.ldexp(np.float64(mantissa), exponent))

    def version(self, expected: tuple[int, ...], what: str) -> int:
        version = self.integer()
        if version not in expected:
            raise self.fail(f"{what} has version {version}, expected one of {expected}")
        return version

    def name(self, expected: tuple[str, ...], what: str) -> str:
        name = self.string()
        if name not in expected:
            raise self.fail(f"found layer {name!r} where the network has {what} ({' or '.join(expected)})")
        return name

    def tensor(self) -> np.ndarray:
        self.version((2,), "a tensor")
        shape = [self.integer() for _ in range(4)]
        if any(d < 0 for d in shape):
            raise self.fail(f"a tensor of shape {shape}")
        count = int(np.prod(shape, dtype=np.int64))
        values = np.frombuffer(self.take(count * 4), dtype="<f4").astype(np.float32)
        return values.reshape(shape)

    def alias_tensor(self) -> tuple[int, int, int, int]:
        self.version((1,), "an alias tensor")
        return tuple(self.integer() for _ in range(4))

    def expect(self, value: int, actual: int, what: str) -> None:
        if actual != value:
            raise self.fail(f"{what} is {actual}, the network has {value}")


@dataclass
class Layer:
    """One layer of the parsed network: its spec and, for con/affine/fc, its weights."""

    spec: Spec
    weights: dict[str, np.ndarray] = field(default_factory=dict)
    disabled: bool = False  # an affine or relu that dlib skips (folded into its conv by dlib)


@dataclass
class DlibResnet:
    channel_means: np.ndarray  # float32 [3]: R, G, B subtracted before dividing by 256
    layers: list[Layer]  # innermost (the first conv) first


def _read_con(reader: _Reader, spec: Spec, inputs: int) -> dict[str, np.ndarray]:
    _, filters, size, stride = spec
    version = reader.name(("con_4", "con_5", "con_6"), f"con<{filters},{size},{size},{stride},{stride}>")
    params = reader.tensor().ravel()
    reader.expect(filters, reader.integer(), "the number of filters")
    for what, value in (("rows", size), ("columns", size), ("row stride", stride), ("column stride", stride)):
        reader.expect(value, reader.integer(), f"the filter {what}")
    padding = 0 if stride != 1 else size // 2
    reader.expect(padding, reader.integer(), "the row padding")
    reader.expect(padding, reader.integer(), "the column padding")
    weight_shape = reader.alias_tensor()
    bias_shape = reader.alias_tensor()
    for _ in range(4):  # learning-rate and weight-decay multipliers
        reader.real()
    use_bias = reader.boolean() if version in ("con_5", "con_6") else True
    use_relu = reader.boolean() if version == "con_6" else False
    reader.expect((filters, inputs, size, size), weight_shape, "the filter shape")
    weight_count = filters * inputs * size * size
    reader.expect(weight_count + (filters if use_bias else 0), params.size, "the number of conv parameters")
    weights = {"W": params[:weight_count].reshape(filters, inputs, size, size)}
    if use_bias:
        reader.expect((1, filters, 1, 1), bias_shape, "the bias shape")
        weights["B"] = params[weight_count:]
    if use_relu:
        raise reader.fail("a conv with a fused relu, which this converter does not implement")
    return weights


def _read_affine(reader: _Reader, channels: int) -> tuple[dict[str, np.ndarray], bool]:
    version = reader.name(("affine_", "affine_2", "bn_con2"), "affine")
    if version == "bn_con2":
        return _read_batch_norm(reader, channels), False
    params = reader.tensor().ravel()
    gamma_shape = reader.alias_tensor()
    beta_shape = reader.alias_tensor()
    mode = reader.integer()
    disabled = reader.boolean() if version == "affine_2" else False
    reader.expect(0, mode, "the affine mode (0 = per channel)")
    reader.expect((1, channels, 1, 1), gamma_shape, "the affine scale shape")
    reader.expect((1, channels, 1, 1), beta_shape, "the affine shift shape")
    reader.expect(2 * channels, params.size, "the number of affine parameters")
    return {"gamma": params[:channels], "beta": params[channels:]}, disabled


def _read_batch_norm(reader: _Reader, channels: int) -> dict[str, np.ndarray]:
    """A batch norm layer as the affine dlib turns it into: gamma / sqrt(var + eps), beta - mean * that."""
    params = reader.tensor().ravel()
    reader.alias_tensor()
    reader.alias_tensor()
    reader.tensor()  # means and inverse standard deviations of the last training batch
    reader.tensor()
    running_means = reader.tensor().ravel()
    running_variances = reader.tensor().ravel()
    reader.integer()  # num_updates
    reader.integer()  # running_stats_window_size
    for _ in range(4):
        reader.real()
    eps = reader.real()
    reader.expect(2 * channels, params.size, "the number of batch norm parameters")
    reader.expect(channels, running_means.size, "the number of running means")
    reader.expect(channels, running_variances.size, "the number of running variances")
    scale = params[:channels] / np.sqrt(running_variances + np.float32(eps))
    return {
        "gamma": scale.astype(np.float32),
        "beta": (params[channels:] - scale * running_means).astype(np.float32),
    }


def _read_pool(reader: _Reader, spec: Spec) -> None:
    kind, size, stride = spec
    reader.name((f"{kind}_2",), kind)
    padding = 0 if stride != 1 else size // 2
    for what, value in (
        ("rows", size),
        ("columns", size),
        ("row stride", stride),
        ("column stride", stride),
        ("row padding", padding),
        ("column padding", padding),
    ):
        reader.expect(value, reader.integer(), f"the {kind} {what}")


def _read_fc(reader: _Reader, spec: Spec, inputs: int) -> dict[str, np.ndarray]:
    _, outputs = spec
    version = reader.name(("fc_2", "fc_3"), f"fc_no_bias<{outputs}>")
    reader.expect(outputs, reader.integer(), "the number of fc outputs")
    reader.expect(inputs, reader.integer(), "the number of fc inputs")
    params = reader.tensor().ravel()
    weight_shape = reader.alias_tensor()
    reader.alias_tensor()
    reader.expect(1, reader.integer(), "the fc bias mode (1 = no bias)")
    for _ in range(4):
        reader.real()
    if version == "fc_3":
        reader.boolean()
    reader.expect((inputs, outputs, 1, 1), weight_shape, "the fc weight shape")
    reader.expect(inputs * outputs, params.size, "the number of fc parameters")
    return {"W": params.reshape(inputs, outputs)}


def _read_layer_state(reader: _Reader, version: int) -> None:
    """What add_layer keeps for training after a layer's details: three flags and gradient buffers."""
    for _ in range(3):
        reader.boolean()
    reader.tensor()  # x_grad
    reader.tensor()  # cached_output
    if version >= 2:
        reader.tensor()  # params_grad (grad_final for the layer over the input)


def parse_resnet(data: bytes) -> DlibResnet:
    """The layers and weights of dlib_face_recognition_resnet_model_v1.dat (raises
    DlibModelFormatError for anything else, naming what did not match and where)."""
    reader = _Reader(data)
    reader.version((1,), "the loss layer")
    loss = reader.name(("loss_metric_", "loss_metric_2"), "loss_metric")
    if loss == "loss_metric_2":
        reader.real()  # margin and distance threshold: training only
        reader.real()

    versions = []
    for index, spec in enumerate(NETWORK):
        if spec[0] in ("tag", "skip"):
            versions.append(reader.version((1,), f"layer {index} ({spec[0]}{spec[1]})"))
        elif index == len(NETWORK) - 1:  # the layer over the input: add_layer<…, input_layer>
            versions.append(reader.version((2, 3), f"layer {index} ({spec[0]})"))
        else:
            versions.append(reader.version((1, 2), f"layer {index} ({spec[0]})"))

    reader.name(("input_rgb_image_sized",), "input_rgb_image_sized<150>")
    means = np.array([reader.real() for _ in range(3)], dtype=np.float32)
    reader.expect(CHIP_SIZE, reader.integer(), "the input rows")
    reader.expect(CHIP_SIZE, reader.integer(), "the input columns")

    layers: list[Layer] = []
    channels = 3  # of the tensor going into the next layer
    tag_channels: dict[int, int] = {}
    for index in range(len(NETWORK) - 1, -1, -1):
        spec, version = NETWORK[index], versions[index]
        layer = Layer(spec)
        kind = spec[0]
        if kind == "tag":
            tag_channels[spec[1]] = channels
        elif kind == "skip":
            channels = tag_channels[spec[1]]
        if kind in ("tag", "skip"):
            layers.append(layer)
            continue
        if kind == "con":
            layer.weights = _read_con(reader, spec, channels)
        elif kind == "affine":
            layer.weights, layer.disabled = _read_affine(reader, channels)
        elif kind == "relu":
            relu = reader.name(("relu_", "relu_2"), "relu")
            layer.disabled = reader.boolean() if relu == "relu_2" else False
        elif kind in ("max_pool", "avg_pool"):
            _read_pool(reader, spec)
        elif kind == "add_prev":
            reader.name(("add_prev_",), f"add_prev{spec[1]}")
        elif kind == "fc":
            layer.weights = _read_fc(reader, spec, channels)
        _read_layer_state(reader, version)
        if index == len(NETWORK) - 1 and version >= 3:
            reader.integer()  # sample expansion factor
        layers.append(layer)
        if kind in ("con", "fc"):
            channels = spec[1]
        elif kind == "add_prev":  # the sum is as wide as the wider input (see _pad_to)
            channels = max(channels, tag_channels[spec[1]])
    if reader.pos != len(reader.data):
        raise reader.fail(f"{len(reader.data) - reader.pos} bytes after the network")
    return DlibResnet(channel_means=means, layers=layers)


# -- the ONNX graph -----------------------------------------------------------------------------


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.count = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}_{self.count}"

    def constant(self, prefix: str, value: np.ndarray) -> str:
        name = self.fresh(prefix)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], prefix: str, **attributes) -> str:
        out = self.fresh(prefix)
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attributes))
        return out


@dataclass
class _Value:
    name: str
    shape: tuple[int, int, int]  # channels, rows, columns (the batch is N)


def _pooled(size: int, window: int, stride: int) -> int:
    return 1 + (size - window) // stride


def _pad_to(graph: _Graph, value: _Value, shape: tuple[int, int, int]) -> str:
    """Zero-extend `value` to `shape` at the end of each axis, as dlib's add_prev sums tensors of
    different sizes (dlib/cuda/cpu_dlib.cpp `add`: missing entries count as 0)."""
    if value.shape == shape:
        return value.name
    extra = [0, *(want - have for want, have in zip(shape, value.shape, strict=True))]
    pads = graph.constant("pads", np.array([0, 0, 0, 0, *extra], dtype=np.int64))
    return graph.node("Pad", [value.name, pads], "pad", mode="constant")


def build_onnx(resnet: DlibResnet) -> onnx.ModelProto:
    """The network as an ONNX model: `image` [N, 3, 150, 150] float32 (preprocessed as
    DlibResnet.preprocess does) -> `descriptor` [N, 128]."""
    graph = _Graph()
    current = _Value(INPUT_NAME, (3, CHIP_SIZE, CHIP_SIZE))
    tags: dict[int, _Value] = {}
    for layer in resnet.layers:
        kind = layer.spec[0]
        channels, rows, cols = current.shape
        if kind == "tag":
            tags[layer.spec[1]] = current
        elif kind == "skip":
            current = tags[layer.spec[1]]
        elif kind == "con":
            _, filters, size, stride = layer.spec
            pad = 0 if stride != 1 else size // 2
            inputs = [current.name, graph.constant("W", layer.weights["W"])]
            if "B" in layer.weights:
                inputs.append(graph.constant("B", layer.weights["B"]))
            name = graph.node(
                "Conv", inputs, "conv", kernel_shape=[size, size], strides=[stride, stride], pads=[pad] * 4
            )
            out_rows, out_cols = (_pooled(d + 2 * pad, size, stride) for d in (rows, cols))
            current = _Value(name, (filters, out_rows, out_cols))
        elif kind == "affine":
            if not layer.disabled:
                gamma = graph.constant("gamma", layer.weights["gamma"].reshape(-1, 1, 1))
                beta = graph.constant("beta", layer.weights["beta"].reshape(-1, 1, 1))
                scaled = graph.node("Mul", [current.name, gamma], "scale")
                current = _Value(graph.node("Add", [scaled, beta], "shift"), current.shape)
        elif kind == "relu":
            if not layer.disabled:
                current = _Value(graph.node("Relu", [current.name], "relu"), current.shape)
        elif kind == "max_pool" or (kind == "avg_pool" and layer.spec[1] != 0):
            _, size, stride = layer.spec
            op = "MaxPool" if kind == "max_pool" else "AveragePool"
            name = graph.node(op, [current.name], "pool", kernel_shape=[size, size], strides=[stride, stride])
            current = _Value(name, (channels, _pooled(rows, size, stride), _pooled(cols, size, stride)))
        elif kind == "avg_pool":  # avg_pool_everything
            pooled = graph.node("GlobalAveragePool", [current.name], "gap")
            current = _Value(graph.node("Flatten", [pooled], "flat", axis=1), (channels, 1, 1))
        elif kind == "add_prev":
            other = tags[layer.spec[1]]
            shape = tuple(max(a, b) for a, b in zip(current.shape, other.shape, strict=True))
            name = graph.node("Add", [_pad_to(graph, current, shape), _pad_to(graph, other, shape)], "add")
            current = _Value(name, shape)
        elif kind == "fc":
            weights = graph.constant("fc", layer.weights["W"])
            current = _Value(graph.node("MatMul", [current.name, weights], "fc"), (layer.spec[1], 1, 1))
        else:
            raise ValueError(f"unknown layer kind {kind!r}")
    graph.nodes.append(helper.make_node("Identity", [current.name], [OUTPUT_NAME], name=OUTPUT_NAME))
    onnx_graph = helper.make_graph(
        graph.nodes,
        "dlib_face_recognition_resnet_model_v1",
        [helper.make_tensor_value_info(INPUT_NAME, TensorProto.FLOAT, ["N", 3, CHIP_SIZE, CHIP_SIZE])],
        [helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, ["N", DESCRIPTOR_SIZE])],
        graph.initializers,
    )
    return helper.make_model(
        onnx_graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION
    )


@dataclass(frozen=True)
class ConvertedResnet:
    """The .dat converted: the serialized ONNX model, the input means and the .dat's digest."""

    onnx_bytes: bytes
    channel_means: np.ndarray
    source_sha256: str

    def preprocess(self, chips: list[np.ndarray]) -> np.ndarray:
        """150x150 RGB uint8 chips -> the network input [N, 3, 150, 150], as input_rgb_image_sized
        computes it: (value - channel mean) / 256 in float32."""
        batch = np.stack(chips).astype(np.float32)
        batch -= self.channel_means
        batch /= np.float32(256.0)
        return np.ascontiguousarray(batch.transpose(0, 3, 1, 2))


def convert_file(path: Path | str) -> ConvertedResnet:
    """Parse dlib's .dat and build its ONNX model, in memory."""
    data = Path(path).read_bytes()
    resnet = parse_resnet(data)
    model = build_onnx(resnet)
    return ConvertedResnet(
        onnx_bytes=model.SerializeToString(),
        channel_means=resnet.channel_means,
        source_sha256=hashlib.sha256(data).hexdigest(),
    )
