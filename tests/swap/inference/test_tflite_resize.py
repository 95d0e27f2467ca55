"""MediaPipe's detectors rewritten for another input size (swap.inference.tflite_resize), run in LiteRT."""

from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from swap.inference import litert
from swap.inference.tflite_resize import with_input_size

FULL_RANGE = "face_detection_full_range_sparse.tflite"
SHORT_RANGE = "face_detection_short_range.tflite"


def run(content: bytes, tensor: np.ndarray) -> list[np.ndarray]:
    interpreter = Interpreter(model_content=content, num_threads=1)
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], tensor)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]).copy() for d in interpreter.get_output_details()]


@pytest.mark.parametrize("file, size", [(FULL_RANGE, 192), (SHORT_RANGE, 128)])
def test_the_models_own_size_gives_the_same_file(mesh_models_dir, file, size):
    content = (mesh_models_dir / file).read_bytes()
    assert with_input_size(content, size, size) == content


@pytest.mark.parametrize(
    "file, height, width, anchors",
    [
        (FULL_RANGE, 288, 192, 72 * 48),  # one stride-4 layer, one anchor a cell
        (FULL_RANGE, 224, 384, 56 * 96),
        (SHORT_RANGE, 256, 128, 32 * 16 * 2 + 16 * 8 * 6),  # stride 8 x2, then stride 16 x6
    ],
)
def test_a_larger_input_gives_an_anchor_grid_of_its_size(mesh_models_dir, file, height, width, anchors):
    content = with_input_size((mesh_models_dir / file).read_bytes(), height, width)
    regressors, scores = run(content, np.zeros((1, height, width, 3), np.float32))
    assert regressors.shape == (1, anchors, 16) and scores.shape == (1, anchors, 1)


def test_a_size_off_the_networks_grid_is_refused(mesh_models_dir):
    content = (mesh_models_dir / FULL_RANGE).read_bytes()
    with pytest.raises(ValueError, match="grid"):
        with_input_size(content, 200, 200)


def test_a_loaded_model_keeps_its_resized_copies_and_bounds_them(mesh_models_dir):
    model = litert.load_tflite(mesh_models_dir / FULL_RANGE, "blazeface_full_range")
    assert model.at_input_size(192, 192) is model
    first = model.at_input_size(256, 192)
    assert first.input_shape == (1, 256, 192, 3) and model.at_input_size(256, 192) is first
    for extra in range(litert.RESIZED_KEPT):
        model.at_input_size(192, 224 + 32 * extra)
    assert model.at_input_size(256, 192) is not first  # the oldest size was let go
