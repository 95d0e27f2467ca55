"""The swap pipeline, built once per worker process and kept warm (never per job)."""

from __future__ import annotations

import threading

from django.conf import settings

from swap.config import PipelineConfig
from swap.pipeline import Pipeline

_pipeline: Pipeline | None = None
_lock = threading.Lock()


def get_pipeline() -> Pipeline:
    global _pipeline
    with _lock:
        if _pipeline is None:
            config = PipelineConfig.from_env()
            config.models_dir = settings.VISAGE_MODELS_DIR
            _pipeline = Pipeline(config)
        return _pipeline


def warm_up() -> None:
    get_pipeline().warm_up()
