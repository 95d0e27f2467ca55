"""dlib's HOG frontal face detector.

HOG cost grows with pixel count (and 4x per upsample), so large frames are searched on a
downscaled copy and the boxes mapped back to frame pixels.
"""

from __future__ import annotations

import cv2
import dlib
import numpy as np

from swap import dlib_models
from swap.image_io import reduced
from swap.inference import clock as inference_clock
from swap.types import Face


def _five_from_box(box: np.ndarray) -> np.ndarray:
    """Rough 5 points from a box, replaced by the landmarker's points later."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    rel = np.array([[0.3, 0.38], [0.7, 0.38], [0.5, 0.6], [0.35, 0.78], [0.65, 0.78]], np.float32)
    return (rel * [w, h] + [x1, y1]).astype(np.float32)


class DlibHogDetector:
    name = "dlib_hog"
    reports_inference_time = True

    def __init__(self, *, upsample: int = 1, max_side: int = 1024, score_threshold: float = 0.0):
        self.upsample = upsample
        self.max_side = max_side
        self.score_threshold = score_threshold
        self._detector = dlib_models.frontal_detector()

    def detect(self, frame: np.ndarray, *, max_side: int | None = None, upsample: int | None = None) -> list[Face]:
        """Faces found on a copy of at most `max_side` px, searched `upsample` times doubled (defaults:
        the configured values). Each doubling finds faces half as small and costs ~4x."""
        h, w = frame.shape[:2]
        scale = min(1.0, (max_side or self.max_side) / max(h, w))
        small = frame if scale == 1.0 else reduced(frame, (round(w * scale), round(h * scale)))
        # HOG runs on grey; a contiguous single-channel image avoids dlib's own conversion.
        grey = np.ascontiguousarray(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY))
        with inference_clock.measure(self.name, "dlib", 1):
            rects, scores, _ = self._detector.run(
                grey, self.upsample if upsample is None else upsample, self.score_threshold
            )
        faces = []
        for rect, score in zip(rects, scores, strict=True):
            box = np.array([rect.left(), rect.top(), rect.right() + 1, rect.bottom() + 1], np.float32) / scale
            box = np.clip(box, 0, [w, h, w, h]).astype(np.float32)
            faces.append(Face(box=box, score=float(score), landmarks_5=_five_from_box(box)))
        faces.sort(key=lambda f: f.area, reverse=True)
        return faces


def to_dlib_rect(box: np.ndarray) -> dlib.rectangle:
    x1, y1, x2, y2 = (int(round(v)) for v in box)
    return dlib.rectangle(x1, y1, x2 - 1, y2 - 1)
