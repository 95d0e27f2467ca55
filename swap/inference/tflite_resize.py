"""A .tflite detector rewritten for another input size: the same weights, every shape recomputed.

MediaPipe ships BlazeFace for one square input (192 px full range, 128 px short range), but the
network is fully convolutional: on a larger input it gives its outputs for a larger grid of
anchors (its scores run somewhat lower there: blazeface.WIDE_SPAN). LiteRT's XNNPACK delegate
refuses a resized input at run time, so the file itself is
rewritten: the input's shape, every activation's shape (recomputed op by op from the op's options,
as the interpreter's own shape inference would), the output sizes of RESIZE_BILINEAR and the
targets of RESHAPE. Every one of those is a vector of unchanged length, so the flatbuffer is
patched in place (~50 ms, most of it reading the file's tables in Python) instead of rebuilt.
Only the op set of MediaPipe's face detectors is known here; any other op raises, so a new model
file cannot be resized wrongly in silence. Rewriting to the model's own size gives a
byte-identical file (tests/swap/inference/test_tflite_resize.py).
"""

from __future__ import annotations

import numpy as np
from ai_edge_litert import schema_py_generated as schema

_OP_NAMES = {value: name for name, value in vars(schema.BuiltinOperator).items() if not name.startswith("_")}
_SAME_SHAPE = {"ADD", "RELU", "RELU6", "LOGISTIC"}
_CONSTANT = {"DEQUANTIZE", "DENSIFY"}  # weights: their shapes do not depend on the input


class UnsupportedModel(ValueError):
    """The model holds an op whose output shape this module cannot recompute."""


def _options(op: schema.Operator, cls: type) -> object:
    table = op.BuiltinOptions()
    options = cls()
    options.Init(table.Bytes, table.Pos)
    return options


def _pooled(size: int, kernel: int, stride: int, padding: int) -> int:
    if padding == schema.Padding.VALID:
        return (size - kernel) // stride + 1
    return -(-size // stride)


def with_input_size(content: bytes, height: int, width: int) -> bytes:
    """`content` (a one-subgraph .tflite with one NHWC image input) for an input of `height` x
    `width` pixels. Sizes must keep every layer's grid whole (BlazeFace: multiples of 32 full
    range, 16 short range); a size that does not raises ValueError."""
    data = bytearray(content)
    model = schema.Model.GetRootAsModel(data, 0)
    graph = model.Subgraphs(0)
    original = [graph.Tensors(i).ShapeAsNumpy().tolist() for i in range(graph.TensorsLength())]
    shapes: dict[int, list[int]] = {}
    batch, old_h, old_w, channels = original[graph.Inputs(0)]
    shapes[graph.Inputs(0)] = [batch, height, width, channels]
    int_constants: dict[int, list[int]] = {}  # tensor -> its new int32 values (resize sizes, reshape targets)

    def shape(tensor: int) -> list[int]:
        return shapes.get(tensor, original[tensor])

    for index in range(graph.OperatorsLength()):
        op = graph.Operators(index)
        code = model.OperatorCodes(op.OpcodeIndex())
        name = _OP_NAMES[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())]
        inputs = [op.Inputs(i) for i in range(op.InputsLength())]
        source = shape(inputs[0])
        if name in _CONSTANT:
            continue
        if name in _SAME_SHAPE:
            if name == "ADD" and shape(inputs[1]) != source:
                other = shape(inputs[1])
                raise ValueError(f"input {height}x{width}: ADD of {source} and {other} (size not a grid multiple)")
            out = list(source)
        elif name == "PAD":
            pads = _int_values(model, graph, inputs[1]).reshape(-1, 2)
            out = [int(d + a + b) for d, (a, b) in zip(source, pads, strict=True)]
        elif name in ("CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D"):
            if name == "MAX_POOL_2D":
                o = _options(op, schema.Pool2DOptions)
                kernel, out_channels = (o.FilterHeight(), o.FilterWidth()), source[3]
            else:
                o = _options(op, schema.Conv2DOptions if name == "CONV_2D" else schema.DepthwiseConv2DOptions)
                weights = shape(inputs[1])  # conv: [out, kh, kw, in]; depthwise: [1, kh, kw, out]
                kernel, out_channels = (weights[1], weights[2]), weights[0 if name == "CONV_2D" else 3]
            out = [
                source[0],
                _pooled(source[1], kernel[0], o.StrideH(), o.Padding()),
                _pooled(source[2], kernel[1], o.StrideW(), o.Padding()),
                out_channels,
            ]
        elif name == "RESIZE_BILINEAR":
            factor = original[op.Outputs(0)][1] // original[inputs[0]][1]
            size = [source[1] * factor, source[2] * factor]
            int_constants[inputs[1]] = size
            out = [source[0], *size, source[3]]
        elif name == "DEPTH_TO_SPACE":
            block = _options(op, schema.DepthToSpaceOptions).BlockSize()
            out = [source[0], source[1] * block, source[2] * block, source[3] // (block * block)]
        elif name == "RESHAPE":
            target = original[op.Outputs(0)]
            anchors_axis = int(np.argmax(target))  # [1, anchors, values]: the anchors' count changes
            out = list(target)
            out[anchors_axis] = int(np.prod(source)) // int(
                np.prod([d for i, d in enumerate(target) if i != anchors_axis])
            )
            # The target, as a constant tensor or in the options: one with a -1 resolves itself.
            if len(inputs) > 1:
                if -1 not in _int_values(model, graph, inputs[1]).tolist():
                    int_constants[inputs[1]] = out
            elif -1 not in _options(op, schema.ReshapeOptions).NewShapeAsNumpy().tolist():
                raise UnsupportedModel("RESHAPE with a fixed target in its options")
        elif name == "CONCATENATION":
            axis = _options(op, schema.ConcatenationOptions).Axis()
            out = list(source)
            out[axis] = sum(shape(t)[axis] for t in inputs)
        else:
            raise UnsupportedModel(f"op {name} (op {index}): its output shape is not recomputed here")
        for i in range(op.OutputsLength()):
            shapes[op.Outputs(i)] = out

    for tensor, new in shapes.items():
        _write(graph.Tensors(tensor).ShapeAsNumpy(), new, f"tensor {tensor}'s shape")
    buffers = [graph.Tensors(t).Buffer() for t in range(graph.TensorsLength())]
    for tensor, values in int_constants.items():
        buffer = buffers[tensor]
        if buffers.count(buffer) > 1:
            raise UnsupportedModel(f"tensor {tensor}'s values are shared with another tensor")
        _write(model.Buffers(buffer).DataAsNumpy().view(np.int32), values, f"tensor {tensor}'s values")
    # A writer may share one shape vector between tensors: then a patch reached a tensor it was not for.
    for tensor in range(graph.TensorsLength()):
        if graph.Tensors(tensor).ShapeAsNumpy().tolist() != shape(tensor):
            raise UnsupportedModel(f"tensor {tensor}'s shape shares its storage with another tensor's")
    return bytes(data)


def _int_values(model: schema.Model, graph: schema.SubGraph, tensor: int) -> np.ndarray:
    return model.Buffers(graph.Tensors(tensor).Buffer()).DataAsNumpy().view(np.int32).copy()


def _write(view: np.ndarray, values: list[int], what: str) -> None:
    """`values` over `view`, a writable view into the model's bytes (same length: nothing moves)."""
    if len(view) != len(values):
        raise UnsupportedModel(f"{what}: {len(view)} values, {len(values)} to write")
    view[:] = values
