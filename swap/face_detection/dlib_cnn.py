"""dlib's CNN (MMOD) face detector: the fallback when HOG finds nothing.

It finds turned, profile-ish and partly cut-off faces that HOG misses, but costs seconds on a
large frame on CPU, so it runs on a copy of at most `max_side` px and only after HOG (and its
angle retries) came up empty. The model ships with `face_recognition_models`.
"""

from __future__ import annotations

import cv2
import numpy as np

from swap import dlib_models
from swap.face_detection.dlib_hog import _five_from_box
from swap.image_io import reduced
from swap.inference import clock as inference_clock
from swap.types import Face


class DlibCnnDetector:
    name = "dlib_cnn"
    reports_inference_time = True

    def __init__(self, *, max_side: int = 480, upsample: int = 0, score_threshold: float = 0.3) -> None:
        self.max_side = max_side
        self.upsample = upsample
        self.score_threshold = score_threshold
        self._detector = dlib_models.cnn_detector()

    def detect(self, frame: np.ndarray, *, max_side: int | None = None) -> list[Face]:
        h, w = frame.shape[:2]
        scale = min(1.0, (max_side or self.max_side) / max(h, w))
        small = frame if scale == 1.0 else reduced(frame, (round(w * scale), round(h * scale)))
        rgb = np.ascontiguousarray(cv2.cvtColor(small, cv2.COLOR_BGR2RGB))
        with inference_clock.measure():
            found = self._detector(rgb, self.upsample)
        faces = []
        for det in found:
            if det.confidence < self.score_threshold:
                continue
            r = det.rect
            box = np.array([r.left(), r.top(), r.right() + 1, r.bottom() + 1], np.float32) / scale
            box = np.clip(box, 0, [w, h, w, h]).astype(np.float32)
            faces.append(Face(box=box, score=float(det.confidence), landmarks_5=_five_from_box(box)))
        faces.sort(key=lambda f: f.area, reverse=True)
        return faces
