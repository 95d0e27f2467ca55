"""What every ONNX adapter shares: one cached session per model file, warm-up and a batch limit."""

from __future__ import annotations

from pathlib import Path

from swap.config import RuntimeOptions
from swap.inference.local import local_session
from swap.inference.runs import warm_up
from swap.inference.triton_client import triton_session


class OnnxAdapter:
    default_name = ""

    # Only the model runs count as inference (swap.inference.runs.run_in_batches measures them), not
    # the warping and pasting around them.
    reports_inference_time = True

    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str | None = None,
        max_batch: int = 16,
    ):
        self.name = name or self.default_name
        self.max_batch = max_batch
        runtime = runtime or RuntimeOptions()
        if runtime.inference == "triton":
            # The same get_inputs/run surface; the model runs in Triton (swap.serve), so the
            # adapter's own pre/post-processing is unchanged and results are bit-identical.
            self.session = triton_session(self.name, runtime.triton_url)
        elif runtime.inference == "local":
            # The cached session; both versions' sessions while the model has a canary running.
            self.session = local_session(model_path, runtime, self.name)
        else:
            raise ValueError(f"inference must be 'local' or 'triton', not {runtime.inference!r}")
        self.input_name = self.session.get_inputs()[0].name

    def warm_up(self) -> None:
        warm_up(self.session)
