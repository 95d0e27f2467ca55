"""TensorFlow Lite models (MediaPipe's face detector and mesh) under Google's LiteRT runtime.

One interpreter per model file and process (counted like an ONNX session). Interpreters are not
thread-safe, so each call holds the model's lock. They run single-threaded in the calling
thread: a face detector or mesh call is ~1-3 ms, less than a thread pool's hand-off, and the
inference clock bills the calling thread's CPU time exactly.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import sys
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from ai_edge_litert.interpreter import Interpreter

from swap.errors import ModelMissing
from swap.inference import clock as inference_clock
from swap.inference.sessions import record_model_load
from swap.inference.tflite_resize import with_input_size

_lock = threading.Lock()
_models: dict[Path, TfliteModel] = {}


# Input sizes a model keeps rewritten interpreters for (at_input_size): ~10-50 MB each.
RESIZED_KEPT = 6


class TfliteModel:
    """A loaded .tflite file: `run(tensor)` returns its outputs in the model's output order."""

    def __init__(self, path: Path, name: str, content: bytes | None = None) -> None:
        self.name = name
        self.path = path
        self._content = content if content is not None else path.read_bytes()
        # LiteRT's C++ logs "INFO: Created TensorFlow Lite XNNPACK delegate" on the first run.
        with _quiet_stderr():
            self._interpreter = Interpreter(model_content=self._content, num_threads=1)
            self._interpreter.allocate_tensors()
            self._input = self._interpreter.get_input_details()[0]
            self._interpreter.set_tensor(self._input["index"], np.zeros(self._input["shape"], np.float32))
            self._interpreter.invoke()
        self._outputs = [d["index"] for d in self._interpreter.get_output_details()]
        self.input_shape = tuple(int(v) for v in self._input["shape"])
        self._call_lock = threading.Lock()
        self._resized: OrderedDict[tuple[int, int], TfliteModel] = OrderedDict()
        self._resized_lock = threading.Lock()

    def at_input_size(self, height: int, width: int) -> TfliteModel:
        """This model for an input of `height` x `width` (swap.inference.tflite_resize: the same
        weights, the file's shapes rewritten), itself at its own size. The process keeps the last
        RESIZED_KEPT sizes: a video's frames all take one; a new photo size costs ~50 ms once."""
        if (1, height, width) == self.input_shape[:3]:
            return self
        with self._resized_lock:
            model = self._resized.get((height, width))
            if model is None:
                content = with_input_size(self._content, height, width)
                model = TfliteModel(self.path, self.name, content)
                self._resized[(height, width)] = model
                while len(self._resized) > RESIZED_KEPT:
                    self._resized.popitem(last=False)
            self._resized.move_to_end((height, width))
            return model

    @property
    def runtime_identity(self) -> list[str]:
        """Where it runs, for an analysis signature (results differ across runtime builds)."""
        return ["litert", _litert_version(), "cpu"]

    def run(self, tensor: np.ndarray) -> list[np.ndarray]:
        with self._call_lock, inference_clock.measure(self.name, "cpu", 1):
            self._interpreter.set_tensor(self._input["index"], np.ascontiguousarray(tensor, np.float32))
            self._interpreter.invoke()
            return [self._interpreter.get_tensor(i).copy() for i in self._outputs]


@functools.cache
def _litert_version() -> str:
    """Read once: importlib.metadata scans the installed distributions on every call (~0.4 ms), and
    every job's analysis signature asks, twice."""
    return importlib.metadata.version("ai-edge-litert")


@contextmanager
def _quiet_stderr():
    """File descriptor 2 to /dev/null for the enclosed (native) call; a CLI's stderr is its error
    channel, and a model load is not an error."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def load_tflite(path: Path, name: str) -> TfliteModel:
    """The process's interpreter for `path` (loaded and counted the first time)."""
    path = Path(path)
    if not path.is_file():
        raise ModelMissing(name, str(path.parent))
    key = path.resolve()
    with _lock:
        model = _models.get(key)
        if model is None:
            model = _models[key] = TfliteModel(path, name)
            record_model_load(name)
        return model


def clear_tflite_models() -> None:
    with _lock:
        _models.clear()
