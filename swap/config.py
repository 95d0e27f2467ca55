"""Engine configuration: how to run the models (`RuntimeOptions`, which swap.inference reads) and
what the pipeline builds (`PipelineConfig`), optionally read from environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import onnxruntime as ort

AUTO = "auto"

PREFERRED_PROVIDERS = ("TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider")


def available_providers() -> list[str]:
    return list(ort.get_available_providers())


def _default_providers() -> list[str]:
    available = set(available_providers())
    return [p for p in PREFERRED_PROVIDERS if p in available] or ["CPUExecutionProvider"]


@dataclass(frozen=True)
class RuntimeOptions:
    """How to run ONNX models. Frozen (hashable) because it is part of the session cache key."""

    providers: tuple[str, ...] | list[str] = field(default_factory=_default_providers)
    device_id: int = 0
    intra_op_threads: int = 0  # 0 = onnxruntime's default (all cores)
    inter_op_threads: int = 0
    # "local": onnxruntime in this process. "triton": the models run in the Triton service at
    # triton_url (grpc://host:8001 or http://host:8000); OnnxAdapter opens a
    # swap.inference.triton_client session.
    inference: str = "local"
    triton_url: str = ""

    def key(self) -> tuple:
        return (
            tuple(self.providers),
            self.device_id,
            self.intra_op_threads,
            self.inter_op_threads,
            self.inference,
            self.triton_url,
        )

    def __hash__(self) -> int:  # providers may be a list; hash the normalised key
        return hash(self.key())

    def resolved_providers(self) -> list[str]:
        """The requested providers that this onnxruntime build has, in preference order."""
        available = set(available_providers())
        chosen = [p for p in self.providers if p in available]
        return chosen or ["CPUExecutionProvider"]


def _runtime_options_default() -> RuntimeOptions:
    return RuntimeOptions()


@dataclass
class PipelineConfig:
    models_dir: Path = Path("var/models")
    # Backend names, or "auto": the ONNX model when installed, else the dlib/classical default.
    detector: str = AUTO
    landmarker: str = AUTO
    recognizer: str = AUTO
    swapper: str = AUTO
    enhancer: str = AUTO  # used only in mode hq; "none" disables it
    # ONNX swappers' content masks (FaceFusion's occluder and face parser): auto = when installed.
    occluder: str = AUTO  # xseg_1 / xseg_2 / xseg_3 / none
    face_parser: str = AUTO  # bisenet_resnet_34 / bisenet_resnet_18 / none
    runtime: object | None = field(default_factory=_runtime_options_default)  # RuntimeOptions
    max_batch: int = 16  # most faces one swapper call takes; more are split into several calls
    detect_max_side: int = 1024  # larger frames are searched for faces on a downscaled copy
    detect_upsample: int = 1  # dlib HOG: 1 finds faces down to ~40 px on the searched copy
    # dlib HOG scores real faces ~1-3; the astronaut's mission patch scores ~0.02.
    detect_score_threshold: float = 0.2
    # When the detector finds nothing: retry on copies rotated by these angles (degrees), then the
    # fallback detector ("dlib_cnn", or "none"). Not in mode fast. 180 and +-60 added 2026-12-05
    # (`bench/face_analysis.py --hard`, 100 occluded, blurred, dark and turned pictures).
    detect_angles: tuple[float, ...] = (-30.0, 30.0, 90.0, -90.0, 180.0, -60.0, 60.0)
    # dlib's engine: HOG, its angle retries, then the CNN. Behind MediaPipe's BlazeFace the fallback
    # is HOG alone (the CNN found none of the faces BlazeFace missed and cost ~0.5-0.9 s a miss).
    detect_fallback: str = "dlib_cnn"
    max_pixels: int = 40_000_000  # uploads above this are refused before decoding
    # inswapper works at 128 px; 256/512 align the face larger and swap it as 4/16 interleaved
    # 128-px tiles in one batch (FaceFusion's "pixel boost"): sharper faces, 4/16× the model time.
    pixel_boost: int = 128
    # Share of jobs (0-100, stable hash of the job id) that run canary model versions.
    canary_percent: float = 0.0

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> PipelineConfig:
        env = os.environ if environ is None else environ
        cfg = cls()
        if env.get("VISAGE_MODELS_DIR"):
            cfg.models_dir = Path(env["VISAGE_MODELS_DIR"])
        elif env.get("VISAGE_DATA_DIR"):  # as the webapp and `swap models` do
            cfg.models_dir = Path(env["VISAGE_DATA_DIR"]) / "models"
        for name in (
            "detector",
            "landmarker",
            "recognizer",
            "swapper",
            "enhancer",
            "occluder",
            "face_parser",
        ):
            value = env.get(f"VISAGE_{name.upper()}")
            if value:
                setattr(cfg, name, value.strip())
        for name in ("max_batch", "detect_max_side", "detect_upsample", "max_pixels", "pixel_boost"):
            value = env.get(f"VISAGE_{name.upper()}")
            if value:
                try:
                    setattr(cfg, name, int(value))
                except ValueError:
                    raise ValueError(f"VISAGE_{name.upper()} must be an integer, got {value!r}") from None
        if env.get("VISAGE_CANARY_PERCENT"):
            cfg.canary_percent = float(env["VISAGE_CANARY_PERCENT"])
        if env.get("VISAGE_DETECT_FALLBACK"):
            cfg.detect_fallback = env["VISAGE_DETECT_FALLBACK"].strip()
        if "VISAGE_DETECT_ANGLES" in env:  # "" turns the retries off
            raw = env["VISAGE_DETECT_ANGLES"].replace(",", " ").split()
            try:
                cfg.detect_angles = tuple(float(a) for a in raw)
            except ValueError:
                raise ValueError(
                    f"VISAGE_DETECT_ANGLES must be numbers, got {env['VISAGE_DETECT_ANGLES']!r}"
                ) from None
        if env.get("VISAGE_DETECT_SCORE_THRESHOLD"):
            cfg.detect_score_threshold = float(env["VISAGE_DETECT_SCORE_THRESHOLD"])
        device = env.get("VISAGE_DEVICE_ID")
        threads = env.get("VISAGE_THREADS")
        inference = (env.get("VISAGE_INFERENCE") or "").strip().lower()
        if inference and inference not in ("local", "triton"):
            raise ValueError(f"VISAGE_INFERENCE must be 'local' or 'triton', got {inference!r}")
        if cfg.runtime is not None and (device or threads or inference):
            cfg.runtime = replace(
                cfg.runtime,
                device_id=int(device) if device else cfg.runtime.device_id,
                intra_op_threads=int(threads) if threads else cfg.runtime.intra_op_threads,
                inference=inference or cfg.runtime.inference,
                triton_url=env.get("VISAGE_TRITON_URL", "grpc://127.0.0.1:8001").strip()
                if inference == "triton"
                else cfg.runtime.triton_url,
            )
        return cfg
