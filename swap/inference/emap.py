"""inswapper's emap read from a model file: what a local session (and the Triton server's plan)
gives the swapper; a Triton client gets it from the server instead (swap.inference.triton_client)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper


def read_emap(model_path: Path) -> np.ndarray:
    """The 512×512 embedding map: the LAST initializer of the graph (FaceFusion and insightface
    both rely on that position; there is no name to look it up by)."""
    model = onnx.load(str(model_path))
    return numpy_helper.to_array(model.graph.initializer[-1]).astype(np.float32)
