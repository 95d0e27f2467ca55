"""dlib's 68-point shape predictor; 5 alignment points are rebuilt from the 68."""

from __future__ import annotations

import cv2
import numpy as np

from swap import dlib_models
from swap.face_detection.dlib_hog import to_dlib_rect
from swap.inference import clock as inference_clock
from swap.types import Face


def five_from_68(points: np.ndarray) -> np.ndarray:
    """Eye centres, nose tip, mouth corners (FaceFusion's convention; ENGINE-NOTES)."""
    return np.array(
        [points[36:42].mean(0), points[42:48].mean(0), points[30], points[48], points[54]], np.float32
    )


class DlibShapeLandmarker:
    name = "dlib_shape68"
    reports_inference_time = True

    def __init__(self) -> None:
        self._predictor = dlib_models.shape_predictor_68()

    def refine(self, frame: np.ndarray, faces: list[Face]) -> list[Face]:
        # dlib reads RGB or grey; handing it grey skips a channel swap and matches its training.
        grey = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        for face in faces:
            if face.angle:
                pts = self._upright(grey, face)
            else:
                with inference_clock.measure(self.name, "dlib", 1):
                    shape = self._predictor(grey, to_dlib_rect(face.box))
                pts = np.array([(p.x, p.y) for p in shape.parts()], np.float32)
            face.landmarks_68 = pts
            face.landmarks_5 = five_from_68(pts)
        return faces

    def _upright(self, grey: np.ndarray, face: Face) -> np.ndarray:
        """Landmarks of a face found on a rotated copy (Face.angle): predicted on an upright crop
        around it, mapped back; the predictor is trained on upright faces only."""
        x1, y1, x2, y2 = face.box
        centre = ((x1 + x2) / 2.0, (y1 + y2) / 2.0)
        size = int(2 * max(x2 - x1, y2 - y1)) + 2
        m = cv2.getRotationMatrix2D(centre, face.angle, 1.0)
        m[:, 2] += (size / 2.0 - centre[0], size / 2.0 - centre[1])
        crop = cv2.warpAffine(grey, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        half_w, half_h = (x2 - x1) / 2.0, (y2 - y1) / 2.0
        box = np.array([size / 2.0 - half_w, size / 2.0 - half_h, size / 2.0 + half_w, size / 2.0 + half_h])
        with inference_clock.measure():
            shape = self._predictor(crop, to_dlib_rect(box))
        pts = np.array([(p.x, p.y) for p in shape.parts()], np.float32)
        inverse = cv2.invertAffineTransform(m)
        return cv2.transform(pts.reshape(-1, 1, 2), inverse).reshape(-1, 2).astype(np.float32)
