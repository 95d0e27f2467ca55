"""XSeg occlusion mask (FaceFusion's `xseg_1/2/3`): what on the aligned crop is visible face.

Input `input` [N, 256, 256, 3] — channels last, BGR / 255 (the crop as OpenCV holds it); output
[N, 256, 256, 1] in [0, 1], 1 = face. Run on the TARGET crop before the swap, so a hand or a
microphone in front of the face keeps covering the new one. The mask is resized to the crop,
blurred (sigma 5), clipped to [0.5, 1] and rescaled to [0, 1] like every content mask.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from swap.align import soften_mask
from swap.config import RuntimeOptions
from swap.inference.runs import run_in_batches
from swap.onnx_adapter import OnnxAdapter
from swap.types import MaskedCrop

SIZE = 256


class XsegOccluder(OnnxAdapter):
    on: MaskedCrop = "target"  # computed on the crop before the swap

    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str = "xseg_1",
        max_batch: int = 16,
    ):
        super().__init__(model_path, runtime, name=name, max_batch=max_batch)

    def masks(self, crops_bgr: np.ndarray) -> np.ndarray:
        """(N, S, S) float32 in [0, 1] for aligned crops (N, S, S, 3) BGR uint8."""
        size = crops_bgr.shape[1]
        prepared = np.stack([cv2.resize(c, (SIZE, SIZE)) for c in crops_bgr]).astype(np.float32) / 255.0
        (output,) = run_in_batches(self.session, {self.input_name: prepared}, max_batch=self.max_batch)[:1]
        out = []
        for item in output.reshape(len(crops_bgr), SIZE, SIZE, -1)[..., 0]:
            mask = cv2.resize(item.clip(0, 1).astype(np.float32), (size, size))
            out.append(soften_mask(mask))
        return np.stack(out).astype(np.float32)
