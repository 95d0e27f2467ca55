"""dlib's ResNet identity descriptor ("dlib128"): 128-d, same person below 0.6 Euclidean.

dlib cuts the face chips (get_face_chips: the same alignment as its compute_face_descriptor);
the network itself runs in onnxruntime, converted from dlib's model file
(swap.models.dlib_onnx): the same descriptors to float rounding, on all cores and
all faces of a frame in one run, where dlib's build runs it on one thread.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import dlib
import numpy as np
import onnxruntime as ort

from swap import dlib_models
from swap.config import RuntimeOptions
from swap.face_detection.dlib_hog import to_dlib_rect
from swap.inference import clock as inference_clock
from swap.inference.sessions import get_model_session, pool_threads
from swap.models.dlib_onnx import CHIP_PADDING, CHIP_SIZE, INPUT_NAME, convert_file
from swap.types import Face


def _shape(face: Face) -> dlib.full_object_detection:
    if face.landmarks_68 is None:
        raise ValueError("dlib128 embeddings need 68 landmarks; run the landmarker first")
    points = dlib.points([dlib.point(int(round(x)), int(round(y))) for x, y in face.landmarks_68])
    return dlib.full_object_detection(to_dlib_rect(face.box), points)


def face_chips(frame: np.ndarray, faces: list[Face]) -> list[np.ndarray]:
    """The 150x150 RGB chips dlib's compute_face_descriptor cuts for `faces` of a BGR frame."""
    rgb = np.ascontiguousarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
    shapes = dlib.full_object_detections([_shape(f) for f in faces])
    return dlib.get_face_chips(rgb, shapes, size=CHIP_SIZE, padding=CHIP_PADDING)


class DlibResnetRecognizer:
    name = "dlib_resnet"
    embedding_kind = "dlib128"
    reports_inference_time = True

    def __init__(self, runtime: RuntimeOptions | None = None) -> None:
        # Always in this process: the converted model is not one of Triton's.
        runtime = replace(runtime or RuntimeOptions(), inference="local", triton_url="")
        # Parsed and converted once per process (~0.1 s), in memory.
        self._model = dlib_models.load_once(
            "dlib_resnet", lambda: convert_file(dlib_models.model_path(dlib_models.RESNET))
        )
        self.session = get_model_session("dlib_resnet_onnx", self._model.onnx_bytes, runtime)
        providers = self.session.get_providers()
        self.provider = providers[0].removesuffix("ExecutionProvider").lower()
        # What decides the vectors besides dlib's version (its chips): the model file, and the
        # runtime that computes them (CUDA's last bits differ from the CPU's).
        self.engine = {
            "model_sha256": self._model.source_sha256,
            "runtime": ["onnxruntime", ort.__version__, *providers],
        }

    def embed(self, frame: np.ndarray, faces: list[Face]) -> list[np.ndarray]:
        if not faces:
            return []
        batch = self._model.preprocess(face_chips(frame, faces))
        with inference_clock.measure(
            self.name, self.provider, len(faces), pool_threads=pool_threads(self.session)
        ):
            (descriptors,) = self.session.run(None, {INPUT_NAME: batch})
        out = []
        for face, d in zip(faces, descriptors, strict=True):
            vec = np.array(d, np.float32)
            face.embedding = vec
            face.embedding_kind = "dlib128"
            out.append(vec)
        return out


def dlib_distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(a, np.float32) - np.asarray(b, np.float32)))
