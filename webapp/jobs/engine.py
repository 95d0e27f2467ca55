"""The swap pipeline, built once per worker process and kept warm (never per job)."""

from __future__ import annotations

import threading

from django.conf import settings

from swap import inference_clock
from swap.config import PipelineConfig
from swap.pipeline import Pipeline
from webapp.telemetry import metrics

_pipeline: Pipeline | None = None
_lock = threading.Lock()


def get_pipeline() -> Pipeline:
    global _pipeline
    with _lock:
        if _pipeline is None:
            config = PipelineConfig.from_env()
            config.models_dir = settings.VISAGE_MODELS_DIR
            _pipeline = Pipeline(config)
            # Per-model inference timings to Prometheus; the engine itself stays platform-free.
            inference_clock.add_observer(metrics.observe_inference)
        return _pipeline


def warm_up() -> None:
    get_pipeline().warm_up()
