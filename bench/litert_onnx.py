"""MediaPipe's face models under onnxruntime instead of LiteRT: converted faithfully, then timed.

    python bench/litert_onnx.py [--models-dir var/models] [--repeats 30] [--save DIR]

Each installed MediaPipe .tflite (BlazeFace full and short range, Face Mesh) is rewritten as an
ONNX graph (NCHW, the input's height and width left free, so one file serves the detector's square
pass and its wide pass) from the file's own op list and weights. The weights are read from a LiteRT
interpreter built without its default XNNPACK delegate, which keeps every tensor (the fp16
weights after DEQUANTIZE, the sparse ones after DENSIFY); with the delegate those tensors hold no
weights. Ops: the face models' set (CONV_2D, DEPTHWISE_CONV_2D, ADD, PRELU, RELU, PAD, MAX_POOL_2D,
RESIZE_BILINEAR, DEPTH_TO_SPACE, CONCATENATION, RESHAPE); any other op raises.

Printed per model and input size: the largest difference of each output from LiteRT's (the engine's
runtime, XNNPACK) on the astronaut, and the median CPU ms of one call in each runtime, both on one
thread as the engine runs them (swap/inference/litert.py). Figures only, nothing asserted.

2026-12-05, the 2-core CI machine (Intel Xeon, 480 MB L3; a clean portrait's analysis 5-6 ms), one run:
outputs agree to 1e-4 (scores to 9e-5) at every size; CPU ms, LiteRT -> onnxruntime 1.32:
  full range 192x192            3.1 -> 5.5
  full range 224x384            7.8 -> 13.2
  full range 288x480 (a 720p    13.5 -> 22.0   (the wide pass a lone small face costs)
    frame's wide pass)
  short range 128x128           1.0 -> 1.1
  Face Mesh 192x192             1.1 -> 3.5
So on a CPU the converted models are 1.6-3x slower than LiteRT: the conversion buys no CPU time
for the <= 10 ms a face goal of the engine issue. What it would buy is the same models on CUDA or
in Triton (a GPU worker's tracking runs the mesh every frame); not measured, as no GPU was lent.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import onnx
import onnxruntime as ort
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from onnx import TensorProto, helper, numpy_helper
from skimage import data as skdata

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from swap.inference.litert import TfliteModel

OP_NAMES = {value: name for name, value in vars(schema.BuiltinOperator).items() if not name.startswith("_")}
ACTIVATIONS = {schema.ActivationFunctionType.NONE: None, schema.ActivationFunctionType.RELU: "Relu",
               schema.ActivationFunctionType.RELU6: "Relu6"}
NHWC_TO_NCHW_AXIS = {0: 0, 1: 2, 2: 3, 3: 1, -1: 1}
# Input sizes timed per model: the square pass, and the wide pass of a 720p and a 1280x576 copy.
SIZES = {
    "face_detection_full_range_sparse.tflite": [(192, 192), (224, 384), (288, 480)],
    "face_detection_short_range.tflite": [(128, 128)],
    "face_landmark.tflite": [(192, 192)],
}


def _options(op: schema.Operator, cls: type) -> object:
    table = op.BuiltinOptions()
    options = cls()
    options.Init(table.Bytes, table.Pos)
    return options


def _padding(options: object) -> str:
    return "SAME_UPPER" if options.Padding() == schema.Padding.SAME else "VALID"  # TF's SAME pads at the end


def convert(path: Path) -> onnx.ModelProto:
    """The .tflite as an ONNX model: input "input" (1, H, W, C) float32 as the .tflite takes it,
    outputs "output_0".. in the .tflite's order and layout."""
    content = path.read_bytes()
    model = schema.Model.GetRootAsModel(content, 0)
    graph = model.Subgraphs(0)
    interpreter = Interpreter(
        model_content=content, num_threads=1, experimental_preserve_all_tensors=True,
        experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    interpreter.allocate_tensors()
    given = interpreter.get_input_details()[0]
    interpreter.set_tensor(given["index"], np.zeros(given["shape"], np.float32))
    interpreter.invoke()  # fills the weights DEQUANTIZE and DENSIFY make

    nodes: list[onnx.NodeProto] = []
    weights: list[onnx.TensorProto] = []

    def weight(values: np.ndarray, name: str) -> str:
        weights.append(numpy_helper.from_array(np.ascontiguousarray(values), name))
        return name

    def name(tensor: int) -> str:
        return f"t{tensor}"

    def activated(op_type: str, inputs: list[str], output: int, activation: int, **attributes) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"{path.name}: fused activation {activation} not supported")
        act = ACTIVATIONS[activation]
        raw = name(output) + "_raw" if act else name(output)
        nodes.append(helper.make_node(op_type, inputs, [raw], **attributes))
        if act:
            nodes.append(helper.make_node(act, [raw], [name(output)]))

    nodes.append(helper.make_node("Transpose", ["input"], [name(graph.Inputs(0))], perm=[0, 3, 1, 2]))
    for index in range(graph.OperatorsLength()):
        op = graph.Operators(index)
        code = model.OperatorCodes(op.OpcodeIndex())
        kind = OP_NAMES[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())]
        inputs = [op.Inputs(k) for k in range(op.InputsLength())]
        output = op.Outputs(0)
        if kind in ("DEQUANTIZE", "DENSIFY"):
            continue  # weights: read from the interpreter where an op uses them
        if kind in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            kernel = interpreter.get_tensor(inputs[1]).astype(np.float32)
            bias = interpreter.get_tensor(inputs[2]).astype(np.float32)
            if kind == "CONV_2D":  # OHWI -> OIHW
                options, kernel, group = _options(op, schema.Conv2DOptions), kernel.transpose(0, 3, 1, 2), 1
            else:  # 1HWO -> O1HW, one group a channel
                options = _options(op, schema.DepthwiseConv2DOptions)
                if options.DepthMultiplier() != 1:
                    raise ValueError(f"{path.name}: depth multiplier {options.DepthMultiplier()}")
                kernel = kernel.transpose(3, 0, 1, 2)
                group = kernel.shape[0]
            activated(
                "Conv", [name(inputs[0]), weight(kernel, f"w{index}"), weight(bias, f"b{index}")], output,
                options.FusedActivationFunction(), strides=[options.StrideH(), options.StrideW()],
                dilations=[options.DilationHFactor(), options.DilationWFactor()], group=group,
                auto_pad=_padding(options), kernel_shape=list(kernel.shape[2:]),
            )
        elif kind == "ADD":
            options = _options(op, schema.AddOptions)
            activated("Add", [name(inputs[0]), name(inputs[1])], output, options.FusedActivationFunction())
        elif kind == "PRELU":
            slope = interpreter.get_tensor(inputs[1]).astype(np.float32).reshape(-1)[:, None, None]
            nodes.append(helper.make_node("PRelu", [name(inputs[0]), weight(slope, f"a{index}")], [name(output)]))
        elif kind == "RELU":
            nodes.append(helper.make_node("Relu", [name(inputs[0])], [name(output)]))
        elif kind == "PAD":
            pads = interpreter.get_tensor(inputs[1]).astype(np.int64)  # NHWC x (before, after)
            order = [0, 3, 1, 2]
            onnx_pads = np.array([pads[d, 0] for d in order] + [pads[d, 1] for d in order], np.int64)
            nodes.append(helper.make_node("Pad", [name(inputs[0]), weight(onnx_pads, f"p{index}")], [name(output)]))
        elif kind == "MAX_POOL_2D":
            options = _options(op, schema.Pool2DOptions)
            activated("MaxPool", [name(inputs[0])], output, options.FusedActivationFunction(),
                      kernel_shape=[options.FilterHeight(), options.FilterWidth()],
                      strides=[options.StrideH(), options.StrideW()], auto_pad=_padding(options))
        elif kind == "RESIZE_BILINEAR":
            options = _options(op, schema.ResizeBilinearOptions)
            mode = ("align_corners" if options.AlignCorners()
                    else "half_pixel" if options.HalfPixelCenters() else "asymmetric")
            before = interpreter.get_tensor(inputs[0]).shape[1:3]
            after = interpreter.get_tensor(inputs[1])
            # A scale, not a size: the graph then serves any input size (the wide pass's).
            scales = np.array([1, 1, after[0] / before[0], after[1] / before[1]], np.float32)
            nodes.append(helper.make_node("Resize", [name(inputs[0]), "", weight(scales, f"s{index}")],
                                          [name(output)], mode="linear", coordinate_transformation_mode=mode))
        elif kind == "DEPTH_TO_SPACE":
            options = _options(op, schema.DepthToSpaceOptions)
            # TF's NHWC depth_to_space is ONNX's DCR order.
            nodes.append(helper.make_node("DepthToSpace", [name(inputs[0])], [name(output)],
                                          blocksize=options.BlockSize(), mode="DCR"))
        elif kind == "CONCATENATION":
            options = _options(op, schema.ConcatenationOptions)
            rank = len(interpreter.get_tensor(output).shape)
            axis = NHWC_TO_NCHW_AXIS[options.Axis()] if rank == 4 else options.Axis()
            activated("Concat", [name(t) for t in inputs], output, options.FusedActivationFunction(), axis=axis)
        elif kind == "RESHAPE":  # to the anchors' rows: from NHWC order, whatever the grid's size
            shape = list(interpreter.get_tensor(output).shape)
            nhwc = name(output) + "_nhwc"
            nodes.append(helper.make_node("Transpose", [name(inputs[0])], [nhwc], perm=[0, 2, 3, 1]))
            target = [shape[0], -1, shape[-1]] if len(shape) == 3 else shape
            nodes.append(helper.make_node("Reshape", [nhwc, weight(np.array(target, np.int64), f"r{index}")],
                                          [name(output)]))
        else:
            raise ValueError(f"{path.name}: op {kind} not supported")

    outputs = []
    for k, detail in enumerate(interpreter.get_output_details()):
        if len(detail["shape"]) == 4:  # back to the .tflite's NHWC (the mesh's 1x1 "images" of points)
            nodes.append(helper.make_node("Transpose", [name(graph.Outputs(k))], [f"output_{k}"], perm=[0, 2, 3, 1]))
        else:
            nodes.append(helper.make_node("Identity", [name(graph.Outputs(k))], [f"output_{k}"]))
        dims = [f"output_{k}_{d}" for d in range(len(detail["shape"]))]
        outputs.append(helper.make_tensor_value_info(f"output_{k}", TensorProto.FLOAT, dims))
    channels = int(given["shape"][3])
    onnx_graph = helper.make_graph(
        nodes, path.stem, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, "height", "width", channels])],
        outputs, weights,
    )
    converted = helper.make_model(onnx_graph, opset_imports=[helper.make_opsetid("", 17)])
    converted.ir_version = 8
    onnx.checker.check_model(converted)
    return converted


def _cpu_ms(call, repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        started = time.process_time()
        call()
        times.append(time.process_time() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models-dir", type=Path, default=Path("var/models"))
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--save", type=Path, help="write the converted .onnx files here")
    args = parser.parse_args()
    picture = skdata.astronaut()
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    found = [args.models_dir / file for file in SIZES if (args.models_dir / file).exists()]
    if not found:
        sys.exit(f"no MediaPipe models in {args.models_dir}: python -m swap models fetch mediapipe-face")
    print(f"{'model':36} {'input':>9} {'max |diff| per output':>24} {'LiteRT ms':>10} {'onnxruntime ms':>15}")
    for path in found:
        converted = convert(path)
        if args.save:
            args.save.mkdir(parents=True, exist_ok=True)
            onnx.save(converted, args.save / f"{path.stem}.onnx")
        session = ort.InferenceSession(converted.SerializeToString(), options, providers=["CPUExecutionProvider"])
        litert = TfliteModel(path, path.stem)
        for height, width in SIZES[path.name]:
            model = litert.at_input_size(height, width)
            tensor = cv2.resize(picture, (width, height)).astype(np.float32)[None] / 127.5 - 1.0
            expected = model.run(tensor)
            got = session.run(None, {"input": tensor})
            if [np.shape(a) for a in expected] != [b.shape for b in got]:
                sys.exit(f"{path.name} at {height}x{width}: output shapes differ")
            diffs = " ".join(f"{float(np.abs(a - b).max()):.1e}" for a, b in zip(expected, got, strict=True))
            litert_ms = _cpu_ms(lambda m=model, t=tensor: m.run(t), args.repeats)
            onnx_ms = _cpu_ms(lambda s=session, t=tensor: s.run(None, {"input": t}), args.repeats)
            print(f"{path.stem:36} {height:>4}x{width:<4} {diffs:>24} {litert_ms:>10.2f} {onnx_ms:>15.2f}")


if __name__ == "__main__":
    main()
