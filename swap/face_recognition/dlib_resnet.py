"""dlib's ResNet identity descriptor ("dlib128"): 128-d, same person below 0.6 Euclidean."""

from __future__ import annotations

import cv2
import dlib
import numpy as np

from swap import dlib_models, inference_clock
from swap.face_detection.dlib_hog import to_dlib_rect
from swap.types import Face


def _shape(face: Face) -> dlib.full_object_detection:
    if face.landmarks_68 is None:
        raise ValueError("dlib128 embeddings need 68 landmarks; run the landmarker first")
    points = dlib.points([dlib.point(int(round(x)), int(round(y))) for x, y in face.landmarks_68])
    return dlib.full_object_detection(to_dlib_rect(face.box), points)


class DlibResnetRecognizer:
    name = "dlib_resnet"
    embedding_kind = "dlib128"
    reports_inference_time = True

    def __init__(self, *, jitter: int = 0) -> None:
        self.jitter = jitter
        self._model = dlib_models.resnet_recognizer()

    def embed(self, frame: np.ndarray, faces: list[Face]) -> list[np.ndarray]:
        if not faces:
            return []
        rgb = np.ascontiguousarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
        shapes = dlib.full_object_detections([_shape(f) for f in faces])
        with inference_clock.measure(self.name, "dlib", len(faces)):
            descriptors = self._model.compute_face_descriptor(rgb, shapes, self.jitter)
        out = []
        for face, d in zip(faces, descriptors, strict=True):
            vec = np.array(d, np.float32)
            face.embedding = vec
            face.embedding_kind = "dlib128"
            out.append(vec)
        return out


def dlib_distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(a, np.float32) - np.asarray(b, np.float32)))
