"""2DFAN4 68-point landmarker (FaceFusion's `2dfan4`).

Input [N, 3, 256, 256]: the face box scaled so its longer side is 195 px, centred, BGR / 255.
Outputs: landmarks [N, 68, 3] on a 64 grid (× 4 → crop pixels) and heatmaps [N, 68, 64, 64];
the score is the mean heatmap peak mapped from [0, 0.9] to [0, 1].
"""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np

from swap.align import transform_points
from swap.inference.runs import run_in_batches
from swap.onnx_adapter import OnnxAdapter
from swap.types import Face

SIZE = 256
SCORE_TO_TRUST = 0.5  # above this the 5 alignment points are rebuilt from the 68


def landmarks_5_from_68(points: np.ndarray) -> np.ndarray:
    """Eye centres (mean of 36–41, 42–47), nose tip 30, mouth corners 48 and 54."""
    return np.array(
        [points[36:42].mean(axis=0), points[42:48].mean(axis=0), points[30], points[48], points[54]],
        dtype=np.float32,
    )


def crop_matrix(box: np.ndarray) -> np.ndarray:
    scale = 195 / max(float(np.max(box[2:] - box[:2])), 1.0)
    translation = (SIZE - (box[2:] + box[:2]) * scale) * 0.5
    return np.array([[scale, 0, translation[0]], [0, scale, translation[1]]], dtype=np.float64)


def optimize_contrast(crop: np.ndarray) -> np.ndarray:
    """CLAHE on lightness for very dark crops. FaceFusion converts with the RGB→Lab codes on
    its BGR crop; we keep that so landmarks match theirs."""
    lab = cv2.cvtColor(crop, cv2.COLOR_RGB2Lab)
    if np.mean(lab[:, :, 0]) < 30:
        lab[:, :, 0] = cv2.createCLAHE(clipLimit=2).apply(lab[:, :, 0])
    return cv2.cvtColor(lab, cv2.COLOR_Lab2RGB)


class TwoDFan4Landmarker(OnnxAdapter):
    """FaceLandmarker for 2dfan4."""

    default_name = "2dfan4"

    def refine(self, frame: np.ndarray, faces: list[Face]) -> list[Face]:
        if not faces:
            return []
        matrices = [crop_matrix(np.asarray(face.box, dtype=np.float64)) for face in faces]
        crops = np.stack([optimize_contrast(cv2.warpAffine(frame, m, (SIZE, SIZE))) for m in matrices])
        tensor = (crops.transpose(0, 3, 1, 2).astype(np.float32) / 255.0).astype(np.float32)
        landmarks, heatmaps = run_in_batches(
            self.session, {self.input_name: tensor}, max_batch=self.max_batch
        )[:2]
        refined = []
        for face, matrix, points, heatmap in zip(faces, matrices, landmarks, heatmaps, strict=True):
            points_68 = transform_points(points[:, :2] / 64 * SIZE, cv2.invertAffineTransform(matrix))
            score = float(np.interp(np.mean(np.amax(heatmap, axis=(1, 2))), [0, 0.9], [0, 1]))
            landmarks_5 = landmarks_5_from_68(points_68) if score > SCORE_TO_TRUST else face.landmarks_5
            refined.append(
                dataclasses.replace(face, landmarks_68=points_68.astype(np.float32), landmarks_5=landmarks_5)
            )
        return refined
