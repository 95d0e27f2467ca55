"""Engine fixtures: the public-domain astronaut portrait and one Pipeline per test session."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from skimage import data

from swap.config import PipelineConfig
from swap.inference.litert import clear_tflite_models
from swap.inference.sessions import clear_sessions
from swap.pipeline import Pipeline
from tests.helpers.face_models import require_mediapipe_models


@pytest.fixture(scope="session")
def astronaut() -> np.ndarray:
    return cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR)


@pytest.fixture(scope="session")
def other_face(astronaut) -> np.ndarray:
    """A 'different' target built from the astronaut: mirrored, enlarged, shifted, recoloured,
    and with the face squashed, so a swap onto it has something to change."""
    img = cv2.flip(astronaut, 1)
    img = cv2.resize(img, None, fx=1.25, fy=1.25, interpolation=cv2.INTER_CUBIC)
    h, w = img.shape[:2]
    shift = np.float32([[1, 0, -40], [0, 1, 25]])
    img = cv2.warpAffine(img, shift, (w, h), borderMode=cv2.BORDER_REFLECT_101)
    # Widen the face region horizontally: other proportions than the source's.
    squash = np.float32([[1.15, 0, -0.15 * 300], [0, 0.95, 0.05 * 150]])
    img = cv2.warpAffine(img, squash, (w, h), borderMode=cv2.BORDER_REFLECT_101)
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.int16)
    lab[..., 1] += 8  # warmer skin
    lab[..., 0] = np.clip(lab[..., 0] * 0.9 + 10, 0, 255)
    return cv2.cvtColor(np.clip(lab, 0, 255).astype(np.uint8), cv2.COLOR_LAB2BGR)


@pytest.fixture(scope="session")
def pipeline(tmp_path_factory) -> Pipeline:
    # An empty models folder: the dlib + classical defaults, whatever is installed elsewhere.
    models_dir = Path(tmp_path_factory.mktemp("models"))
    return Pipeline(PipelineConfig(models_dir=models_dir))


@pytest.fixture(scope="session")
def mesh_models_dir(tmp_path_factory) -> Path:
    """A models folder with only MediaPipe's detector and mesh (the default engine's models)."""
    return require_mediapipe_models(Path(tmp_path_factory.mktemp("mesh-models")))


@pytest.fixture(scope="session")
def mesh_pipeline(mesh_models_dir) -> Pipeline:
    """The default engine as installed by `make`: BlazeFace + Face Mesh, dlib's embedding, classical."""
    return Pipeline(PipelineConfig(models_dir=mesh_models_dir))


@pytest.fixture
def fresh_sessions():
    """No onnxruntime session or LiteRT interpreter cached before or after the test (load counts
    start at zero)."""
    clear_sessions()
    clear_tflite_models()
    yield
    clear_sessions()
    clear_tflite_models()
