"""HyperSwap 1a/1b/1c (256 px): identity swap on the arcface_128 template aligned at 256 px.

Inputs `source` [N, 512] — the L2-NORMALISED ArcFace embedding (no emap, unlike inswapper) —
and `target` [N, 3, 256, 256] RGB (x / 255 − 0.5) / 0.5. Output 0 is the swapped crop in the
same normalisation, mapped back by x · 0.5 + 0.5, clipped to [0, 1] (FaceFusion's
`normalize_crop_frame` for the hyperswap type). Pixel boost 512 runs 4 interleaved tiles.
Licence: ResearchRAIL (non-commercial research use).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from swap.config import RuntimeOptions
from swap.inference.runs import input_dtype, run_in_batches
from swap.swappers.onnx_swapper import OnnxFaceSwapper

SIZE = 256


def normalised_embedding(embedding: np.ndarray) -> np.ndarray:
    e = np.asarray(embedding, np.float32).reshape(1, -1)
    return e / (np.linalg.norm(e) or 1.0)


def preprocess(crops_bgr: np.ndarray) -> np.ndarray:
    rgb = crops_bgr[..., ::-1].astype(np.float32) / 255.0
    return ((rgb - 0.5) / 0.5).transpose(0, 3, 1, 2).astype(np.float32)


def postprocess(output: np.ndarray) -> np.ndarray:
    rgb = (output.astype(np.float32).transpose(0, 2, 3, 1) * 0.5 + 0.5).clip(0, 1)
    return rgb[..., ::-1] * 255.0


class HyperswapSwapper(OnnxFaceSwapper):
    model_size = SIZE
    template = "arcface_128"

    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str = "hyperswap_1a_256",
        **options,
    ):
        super().__init__(model_path, runtime, name=name, **options)
        self.target_dtype = input_dtype(self.session, "target")
        self.source_dtype = input_dtype(self.session, "source")

    def source_input(self, embedding: np.ndarray) -> np.ndarray:
        return normalised_embedding(embedding)

    def _run(self, source: np.ndarray, crops_bgr: np.ndarray) -> np.ndarray:
        target = preprocess(crops_bgr).astype(self.target_dtype)
        src = np.repeat(source, len(crops_bgr), axis=0).astype(self.source_dtype)
        outputs = run_in_batches(self.session, {"target": target, "source": src}, max_batch=self.max_batch)
        return postprocess(outputs[0])  # some exports add a mask output; FaceFusion uses output 0
