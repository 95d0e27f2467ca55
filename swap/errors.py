"""Typed engine errors. Each carries a one-line message a user can act on."""

from __future__ import annotations


class EngineError(Exception):
    code = "engine_error"


class InvalidImage(EngineError):
    code = "invalid_image"

    def __init__(self, message: str, *, which: str | None = None):
        super().__init__(message)
        self.which = which  # "source" | "target" | None


class NoFaceFound(EngineError):
    code = "no_face_detected"

    def __init__(self, which: str):
        super().__init__(f"No face was found in the {which} image.")
        self.which = which  # "source" | "target"


class ModelMissing(EngineError):
    code = "model_missing"

    def __init__(self, name: str, models_dir: str):
        super().__init__(
            f"Model {name!r} is not installed in {models_dir}. "
            f"Install it with: python -m swap models fetch {name} (or: python -m swap models install PATH)"
        )
        self.name = name


class ModelRefused(EngineError):
    """The operator refused this model's licence (VISAGE_ALLOW_NON_COMMERCIAL=0)."""

    code = "model_refused"

    def __init__(self, name: str, licence: str):
        super().__init__(
            f"Model {name!r} is licensed for non-commercial use only ({licence}) and this deployment "
            "refuses such models (VISAGE_ALLOW_NON_COMMERCIAL=0). Choose a commercially usable model."
        )
        self.name = name


class FaceIndexOutOfRange(EngineError):
    code = "face_index_out_of_range"

    def __init__(self, index: int, count: int, *, what: str = "face_index"):
        faces = "1 face" if count == 1 else f"{count} faces"
        super().__init__(
            f"{what} {index} is out of range: the target image has {faces} (valid: 0 to {count - 1})."
            if count
            else f"{what} {index} is out of range: the target image has no faces."
        )
        self.index = index
        self.count = count


class InferenceUnavailable(EngineError):
    """The inference service (VISAGE_INFERENCE=triton) can't be reached or isn't ready.

    A transient fault: the job is retried with backoff and never charged."""

    code = "inference_unavailable"
    transient = True
