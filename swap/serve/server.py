"""The stand-in's model: Triton's Python backend running a version folder's `model.onnx` in onnxruntime.

`python -m swap serve` writes the same repository `python -m swap models repository` writes for
NVIDIA's Triton (swap.models.repository), with `backend: "python"` instead of
`platform: "onnxruntime_onnx"` and this file copied next to every `model.onnx`; PyTriton's
tritonserver binary then serves it. Same model names, version folders, config `parameters`,
dynamic batching and statistics: the workers' client cannot tell the two apart.

Self-contained on purpose: it runs in the Triton venv's Python-backend stub (numpy, onnxruntime,
and Triton's `triton_python_backend_utils`; nothing of Visage is importable there).

A batched model (`max_batch_size` > 0) gets the requests Triton's dynamic batcher merged: they
are stacked on axis 0, run once, and split back, which is what the ONNX Runtime backend does.

Every response also has the output `visage_compute_ns` (the stand-in's config declares it): the
model work each of its items caused, its share of the batch's run: this stub process's CPU time
during onnxruntime's run on the CPU provider (what local inference bills, swap.inference.clock),
the run's wall time on a GPU. The client bills that rather than the Python backend's own
`compute_infer` statistics, which here include the backend's IPC with this stub and its slow first
runs (NVIDIA's ONNX Runtime backend has neither: there the client bills its share of the
statistics). This version of the Python backend cannot set response parameters.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
import triton_python_backend_utils as pb_utils

COMPUTE_OUTPUT = "visage_compute_ns"  # swap.models.repository.COMPUTE_OUTPUT (nothing of Visage imports here)


class TritonPythonModel:
    def initialize(self, args: dict) -> None:
        config = json.loads(args["model_config"])
        folder = Path(args["model_repository"]) / args["model_version"]
        so = ort.SessionOptions()
        so.intra_op_num_threads = int(os.environ.get("VISAGE_TRITON_INTRA_OP_THREADS", "0") or 0)
        so.log_severity_level = 3
        available = set(ort.get_available_providers())
        providers: list = ["CPUExecutionProvider"]
        if "CUDAExecutionProvider" in available:
            device = {"device_id": int(os.environ.get("VISAGE_TRITON_DEVICE_ID", "0") or 0)}
            providers.insert(0, ("CUDAExecutionProvider", device))
        self.session = ort.InferenceSession(str(folder / "model.onnx"), sess_options=so, providers=providers)
        self.on_cpu = self.session.get_providers()[0] == "CPUExecutionProvider"
        self.batched = int(config.get("max_batch_size", 0)) > 0
        self.inputs = [i["name"] for i in config["input"]]
        self.outputs = [o["name"] for o in config["output"] if o["name"] != COMPUTE_OUTPUT]

    def _clock(self) -> int:
        # The stub runs one model instance: its CPU time is this model's work (caller and pool).
        return time.process_time_ns() if self.on_cpu else time.perf_counter_ns()

    def _run(self, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        return self.session.run(self.outputs, feeds)

    def execute(self, requests):
        # The work billed: reading the inputs, the run, and the outputs (what NVIDIA's backend
        # reports as compute_input + compute_infer + compute_output), shared by item.
        start = self._clock()
        feeds = []
        for request in requests:
            feeds.append({n: pb_utils.get_input_tensor_by_name(request, n).as_numpy() for n in self.inputs})
        try:
            if self.batched and len(feeds) > 1:
                sizes = [len(f[self.inputs[0]]) for f in feeds]
                merged = self._run({n: np.concatenate([f[n] for f in feeds], axis=0) for n in self.inputs})
                bounds = np.cumsum([0, *sizes])
                results = [[out[a:b] for out in merged] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
            else:
                results = [self._run(f) for f in feeds]
            outputs = [[np.ascontiguousarray(a) for a in r] for r in results]
        except Exception as exc:  # noqa: BLE001 - the client gets Triton's error, the server keeps serving
            error = pb_utils.TritonError(f"onnxruntime: {exc}")
            return [pb_utils.InferenceResponse(output_tensors=[], error=error) for _ in requests]
        items = [len(f[self.inputs[0]]) if self.batched else 1 for f in feeds]
        per_item = max(0, self._clock() - start) // max(1, sum(items))  # every item's share
        return [
            pb_utils.InferenceResponse(
                output_tensors=[
                    *(pb_utils.Tensor(n, a) for n, a in zip(self.outputs, r, strict=True)),
                    pb_utils.Tensor(
                        COMPUTE_OUTPUT,
                        np.full((count, 1) if self.batched else (1,), per_item, np.int64),
                    ),
                ],
            )
            for r, count in zip(outputs, items, strict=True)
        ]
