"""YOLOv8n-face detector (FaceFusion's `yoloface_8n`): boxes, scores and 5 landmarks.

Input [1, 3, 640, 640]: the frame shrunk to fit (never enlarged), pasted top-left on black
(pad right/bottom), BGR / 255. Output [1, 20, 8400]: per anchor cx, cy, w, h, score and
5 × (x, y, visibility), in letterbox pixels.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from swap.config import RuntimeOptions
from swap.inference.runs import run_in_batches
from swap.onnx_adapter import OnnxAdapter
from swap.types import Face


def letterbox(frame: np.ndarray, size: int) -> tuple[np.ndarray, float, float]:
    """(1, 3, size, size) float32 input and the (ratio_w, ratio_h) mapping input → frame pixels."""
    height, width = frame.shape[:2]
    resized = frame
    if height > size or width > size:
        scale = min(size / height, size / width)
        resized = cv2.resize(frame, (int(width * scale), int(height * scale)))
    canvas = np.zeros((size, size, 3), dtype=np.float32)
    canvas[: resized.shape[0], : resized.shape[1]] = resized
    tensor = (canvas / 255.0).transpose(2, 0, 1)[None].astype(np.float32)
    return tensor, width / resized.shape[1], height / resized.shape[0]


def nms(boxes: np.ndarray, scores: np.ndarray, score_threshold: float, iou_threshold: float) -> list[int]:
    """Indices kept by OpenCV's NMS (highest score first)."""
    if len(boxes) == 0:
        return []
    xywh = [(float(x1), float(y1), float(x2 - x1), float(y2 - y1)) for x1, y1, x2, y2 in boxes]
    keep = cv2.dnn.NMSBoxes(xywh, [float(s) for s in scores], score_threshold, iou_threshold)
    return [int(i) for i in np.asarray(keep).reshape(-1)]


class YolofaceDetector(OnnxAdapter):
    """FaceDetector for yoloface_8n."""

    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str = "yoloface_8n",
        size: int = 640,
        score_threshold: float = 0.5,
        iou_threshold: float = 0.4,
        max_batch: int = 1,  # accepted for a uniform adapter interface; one frame is one run
    ):
        super().__init__(model_path, runtime, name=name, max_batch=max_batch)
        self.size = size
        self.score_threshold = score_threshold
        self.iou_threshold = iou_threshold

    def detect(self, frame: np.ndarray) -> list[Face]:
        tensor, ratio_w, ratio_h = letterbox(frame, self.size)
        (raw,) = run_in_batches(self.session, {self.input_name: tensor})[:1]
        return self.decode(raw, ratio_w, ratio_h)

    def decode(self, raw: np.ndarray, ratio_w: float, ratio_h: float) -> list[Face]:
        rows = np.asarray(raw, dtype=np.float32).reshape(raw.shape[-2], raw.shape[-1]).T  # (8400, 20)
        centres, scores, points = rows[:, :4], rows[:, 4], rows[:, 5:]
        keep = scores > self.score_threshold
        centres, scores, points = centres[keep], scores[keep], points[keep]
        boxes = (
            np.stack(
                [
                    (centres[:, 0] - centres[:, 2] / 2) * ratio_w,
                    (centres[:, 1] - centres[:, 3] / 2) * ratio_h,
                    (centres[:, 0] + centres[:, 2] / 2) * ratio_w,
                    (centres[:, 1] + centres[:, 3] / 2) * ratio_h,
                ],
                axis=1,
            )
            if len(centres)
            else np.zeros((0, 4), np.float32)
        )
        landmarks = points.reshape(-1, 5, 3)[:, :, :2] * np.array([ratio_w, ratio_h], dtype=np.float32)
        faces = []
        for i in nms(boxes, scores, self.score_threshold, self.iou_threshold):
            faces.append(
                Face(
                    box=boxes[i].astype(np.float32),
                    score=float(scores[i]),
                    landmarks_5=landmarks[i].astype(np.float32),
                )
            )
        return faces
