"""BiSeNet face-parser region mask (FaceFusion's `bisenet_resnet_18/34`).

Input `input` [N, 3, 512, 512]: RGB / 255 normalised with ImageNet mean (0.485, 0.456, 0.406)
and std (0.229, 0.224, 0.225); output [N, 19, 512, 512] class scores (CelebAMask-HQ labels).
The mask is 1 where the arg-max class is one of `regions` (by default every facial region:
skin, brows, eyes, glasses, nose, mouth, lips), resized to the crop and softened. Run on the
SWAPPED crop (as FaceFusion does), so hair, ears and background around it stay the target's.
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

SIZE = 512
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
REGIONS = {
    "skin": 1,
    "left-eyebrow": 2,
    "right-eyebrow": 3,
    "left-eye": 4,
    "right-eye": 5,
    "glasses": 6,
    "nose": 10,
    "mouth": 11,
    "upper-lip": 12,
    "lower-lip": 13,
}


class BisenetParser(OnnxAdapter):
    on: MaskedCrop = "swapped"  # computed on the crop after the swap

    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str = "bisenet_resnet_34",
        max_batch: int = 4,
        regions: tuple[str, ...] = tuple(REGIONS),
    ):
        super().__init__(model_path, runtime, name=name, max_batch=max_batch)
        unknown = set(regions) - set(REGIONS)
        if unknown:
            raise ValueError(f"unknown face regions {sorted(unknown)}; known: {', '.join(REGIONS)}")
        self.classes = [REGIONS[r] for r in regions]

    def masks(self, crops_bgr: np.ndarray) -> np.ndarray:
        size = crops_bgr.shape[1]
        rgb = np.stack([cv2.resize(c, (SIZE, SIZE)) for c in crops_bgr])[..., ::-1].astype(np.float32) / 255.0
        prepared = ((rgb - MEAN) / STD).transpose(0, 3, 1, 2).astype(np.float32)
        (output,) = run_in_batches(self.session, {self.input_name: prepared}, max_batch=self.max_batch)[:1]
        out = []
        for scores in output:
            region = np.isin(scores.argmax(0), self.classes).astype(np.float32)
            out.append(soften_mask(cv2.resize(region, (size, size))))
        return np.stack(out).astype(np.float32)
