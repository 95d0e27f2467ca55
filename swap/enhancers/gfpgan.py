"""GFPGAN 1.4 face restoration on the ffhq_512 crop.

Input [N, 3, 512, 512]: RGB (x / 255 − 0.5) / 0.5. Output clipped to [−1, 1], mapped back by
(x + 1) / 2 · 255. The restored crop is pasted through the box mask and the result blended
with the frame at `blend` (FaceFusion's default 80 %).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from swap.align import box_mask, paste_back_many, warp_faces
from swap.config import RuntimeOptions
from swap.inference.runs import clock_stage, run_in_batches
from swap.onnx_adapter import OnnxAdapter
from swap.types import Face

SIZE = 512
TEMPLATE = "ffhq_512"


def preprocess(crops_bgr: np.ndarray) -> np.ndarray:
    rgb = crops_bgr[..., ::-1].astype(np.float32) / 255.0
    return ((rgb - 0.5) / 0.5).transpose(0, 3, 1, 2).astype(np.float32)


def postprocess(output: np.ndarray) -> np.ndarray:
    """(N, 3, S, S) in [−1, 1] RGB → (N, S, S, 3) BGR uint8 (rounded, as FaceFusion)."""
    rgb = (output.astype(np.float32).clip(-1, 1) + 1) / 2
    return np.round(rgb.transpose(0, 2, 3, 1) * 255.0).astype(np.uint8)[..., ::-1]


class GfpganEnhancer(OnnxAdapter):
    """FaceEnhancer for gfpgan_1.4 (and any model with the same single `input`)."""

    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str = "gfpgan_1.4",
        max_batch: int = 4,
        mask_blur: float = 0.3,
    ):
        super().__init__(model_path, runtime, name=name, max_batch=max_batch)
        self.mask = box_mask(SIZE, mask_blur)

    def extra_inputs(self) -> dict[str, np.ndarray]:
        return {}

    def enhance(self, frame: np.ndarray, faces: list[Face], blend: float = 0.8) -> np.ndarray:
        if not faces:
            return frame.copy()
        crops, matrices = warp_faces(frame, [face.landmarks_5 for face in faces], TEMPLATE, SIZE)
        (output,) = run_in_batches(
            self.session, {self.input_name: preprocess(crops)}, self.extra_inputs(), max_batch=self.max_batch
        )[:1]
        # Own stage name: the pipeline subtracts "paste" from the swap stage only.
        with clock_stage("enhance_paste"):
            pasted = paste_back_many(frame, postprocess(output), [self.mask] * len(faces), matrices)
            blend = float(np.clip(blend, 0.0, 1.0))
            return cv2.addWeighted(frame, 1.0 - blend, pasted, blend, 0)
