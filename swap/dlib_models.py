"""Locate and load dlib's model files once per process.

The files ship in the `face_recognition_models` package. Importing that package fails on
setuptools without `pkg_resources`, so we only ask importlib where it lives.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

import dlib

from swap.errors import ModelMissing, ModelRefused
from swap.inference.sessions import record_model_load
from swap.models.registry import SHAPE_68_MODEL, non_commercial_allowed

SHAPE_68 = "shape_predictor_68_face_landmarks.dat"
RESNET = "dlib_face_recognition_resnet_model_v1.dat"
CNN_DETECTOR = "mmod_human_face_detector.dat"


_lock = threading.Lock()
_cache: dict[str, Any] = {}


def models_folder() -> Path:
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing("face_recognition_models", "the Python environment")
    return Path(list(spec.submodule_search_locations)[0]) / "models"


def _record_load(name: str) -> None:
    # The platform proves "models load once per process" through this counter (swap.inference.sessions).
    record_model_load(name)


def load_once(name: str, factory) -> Any:
    """`factory()`, called the first time `name` is asked for in this process (a model load)."""
    with _lock:
        if name not in _cache:
            _cache[name] = factory()
            _record_load(name)
        return _cache[name]


def model_path(filename: str) -> str:
    path = models_folder() / filename
    if not path.is_file():
        raise ModelMissing(filename, str(path.parent))
    return str(path)


def frontal_detector() -> Any:
    return load_once("dlib_hog", dlib.get_frontal_face_detector)


def shape_predictor_68() -> Any:
    """Refused (ModelRefused) where VISAGE_ALLOW_NON_COMMERCIAL=0: see SHAPE_68_MODEL."""
    if not non_commercial_allowed():
        raise ModelRefused(SHAPE_68_MODEL.name, SHAPE_68_MODEL.licence)
    return load_once("dlib_shape68", lambda: dlib.shape_predictor(model_path(SHAPE_68)))


def resnet_recognizer() -> Any:
    """dlib's own ResNet face descriptor (the reference that the ONNX conversion is tested against)."""
    return load_once("dlib_resnet_reference", lambda: dlib.face_recognition_model_v1(model_path(RESNET)))


def cnn_detector() -> Any:
    return load_once("dlib_cnn", lambda: dlib.cnn_face_detection_model_v1(model_path(CNN_DETECTOR)))
