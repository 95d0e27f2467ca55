"""Engine configuration: one dataclass, optionally read from environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from swap.runtime import RuntimeOptions

AUTO = "auto"


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
    enhancer: str = AUTO  # used only when SwapOptions.enhance; "none" disables it
    runtime: object | None = field(default_factory=_runtime_options_default)  # swap.runtime.RuntimeOptions
    max_batch: int = 16  # most faces one swapper call takes; more are split into several calls
    detect_max_side: int = 1024  # larger frames are searched for faces on a downscaled copy
    detect_upsample: int = 1  # dlib HOG: 1 finds faces down to ~40 px on the searched copy
    # dlib HOG scores real faces ~1-3; the astronaut's mission patch scores ~0.02.
    detect_score_threshold: float = 0.2
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
        for name in ("detector", "landmarker", "recognizer", "swapper", "enhancer"):
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
