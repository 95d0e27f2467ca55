"""inswapper_128 (and its fp16 export): identity swap on the arcface_128 crop.

Inputs: `target` [N, 3, 128, 128] RGB / 255 and `source` [N, 512], the latent
(e @ emap) / ‖e‖ where e is the raw ArcFace embedding and `emap` the graph's last initializer.
Output [N, 3, 128, 128] RGB in [0, 1]. All faces of a frame go through one run (up to
`max_batch`), then each is pasted back through the box mask.

Pixel boost (FaceFusion's answer to "higher resolution than 128 px"): the face is aligned at
k·128 px and split into k² interleaved 128-px sub-images (pixel (y, x) goes to sub-image
(y mod k, x mod k)); each runs through the model — all of them in the same batch — and the
outputs are interleaved back into one k·128 crop, which keeps k² times the detail.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from swap.config import RuntimeOptions
from swap.inference.emap import read_emap
from swap.inference.runs import input_dtype, run_in_batches
from swap.swappers.onnx_swapper import (  # noqa: F401 - re-exported for callers
    OnnxFaceSwapper,
    explode_pixel_boost,
    implode_pixel_boost,
)

SIZE = 128
TEMPLATE = "arcface_128"


def source_latent(embedding: np.ndarray, emap: np.ndarray) -> np.ndarray:
    """(1, 512) latent = (e @ emap) / ‖e‖, not re-normalised (FaceFusion, unlike insightface)."""
    e = np.asarray(embedding, dtype=np.float32).reshape(1, -1)
    return (e @ emap) / np.linalg.norm(e)


def preprocess(crops_bgr: np.ndarray) -> np.ndarray:
    """(N, S, S, 3) BGR uint8 → (N, 3, S, S) RGB float32 in [0, 1]."""
    return (crops_bgr[..., ::-1].astype(np.float32) / 255.0).transpose(0, 3, 1, 2).astype(np.float32)


def postprocess(output: np.ndarray) -> np.ndarray:
    """(N, 3, S, S) RGB in [0, 1] → (N, S, S, 3) BGR float32 in [0, 255]."""
    return output.astype(np.float32).transpose(0, 2, 3, 1).clip(0, 1)[..., ::-1] * 255.0


class InswapperSwapper(OnnxFaceSwapper):
    """FaceSwapper for inswapper_128 / inswapper_128_fp16."""

    model_size = SIZE
    template = TEMPLATE

    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str = "inswapper_128",
        **options,
    ):
        super().__init__(model_path, runtime, name=name, **options)
        # A versioned session (Triton, or local while a canary runs) gives the emap of the version
        # each job runs; the plain session: this file's.
        self._served_emap = getattr(self.session, "emap", None)
        self.emap = None if self._served_emap else read_emap(model_path)
        self.target_dtype = input_dtype(self.session, "target")
        self.source_dtype = input_dtype(self.session, "source")

    def source_input(self, embedding: np.ndarray) -> np.ndarray:
        return source_latent(embedding, self._served_emap() if self._served_emap else self.emap)

    def _run(self, latent: np.ndarray, crops_bgr: np.ndarray) -> np.ndarray:
        target = preprocess(crops_bgr).astype(self.target_dtype)
        source = np.repeat(latent, len(crops_bgr), axis=0).astype(self.source_dtype)
        (output,) = run_in_batches(
            self.session, {"target": target, "source": source}, max_batch=self.max_batch
        )[:1]
        return postprocess(output)
