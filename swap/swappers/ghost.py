"""GHOST 1/2/3 (256 px, ai-forever): identity swap on the arcface_112_v1 template aligned at 256 px.

GHOST was trained with its own ArcFace, so the engine's ArcFace embedding (arcface_w600k_r50) is
first mapped into GHOST's space by FaceFusion's converter `crossface_ghost` (input `input`
[1, 512], output 0 [1, 512]). The swapper's `source` [N, 512] is that converted RAW embedding,
NOT L2-normalised afterwards (FaceFusion's `prepare_source_embedding` for the ghost type keeps the
raw half of `convert_source_embedding`); `target` [N, 3, 256, 256] is RGB (x / 255 − 0.5) / 0.5,
and output 0 maps back by x · 0.5 + 0.5, clipped to [0, 1] — the same crop normalisation as
HyperSwap. Licence: Apache-2.0 (GHOST); the converter's licence is not stated by FaceFusion.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from swap.config import RuntimeOptions
from swap.inference.local import models_dir_of
from swap.inference.runs import input_dtype, run_in_batches
from swap.models import registry
from swap.onnx_adapter import OnnxAdapter
from swap.swappers.hyperswap import HyperswapSwapper

TEMPLATE = "arcface_112_v1"
CONVERTER = "crossface_ghost"


class CrossfaceConverter(OnnxAdapter):
    """Maps a raw ArcFace (w600k_r50) embedding into the embedding space a swapper was trained on."""

    default_name = CONVERTER

    def convert(self, embedding: np.ndarray) -> np.ndarray:
        """(512,) raw ArcFace embedding → (1, 512) converted embedding, as the model returns it."""
        dtype = input_dtype(self.session, self.input_name)
        e = np.asarray(embedding, np.float32).reshape(1, -1).astype(dtype)
        converted = run_in_batches(self.session, {self.input_name: e}, max_batch=1)[0]
        return converted.reshape(1, -1).astype(np.float32)


class GhostSwapper(HyperswapSwapper):
    """HyperSwap's crop normalisation and batching; its own template and source embedding."""

    template = TEMPLATE

    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str = "ghost_1_256",
        **options,
    ):
        super().__init__(model_path, runtime, name=name, **options)
        # The converter lives in the same models directory (its own manifest entry and version).
        self.converter = registry.load_adapter(CONVERTER, models_dir_of(name, model_path), runtime)

    def source_input(self, embedding: np.ndarray) -> np.ndarray:
        return self.converter.convert(embedding)
