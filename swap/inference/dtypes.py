"""ONNX tensor types as numpy dtypes: one table for local sessions, the Triton client and server.

numpy only: the Triton server imports this in its own venv (numpy, onnxruntime, nvidia-pytriton).
"""

from __future__ import annotations

import numpy as np

ONNX_TO_NUMPY = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(double)": np.float64,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(uint8)": np.uint8,
    "tensor(bool)": np.bool_,
}


def numpy_type(onnx_type: str) -> type:
    """The numpy dtype of an ONNX type string ("tensor(float)"); float32 for one not in the table."""
    return ONNX_TO_NUMPY.get(onnx_type, np.float32)
