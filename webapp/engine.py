"""The swap pipeline, built once per worker process and kept warm (never per job)."""

from __future__ import annotations

import threading

from django.conf import settings

_pipeline = None
_lock = threading.Lock()


def get_pipeline():
    global _pipeline
    with _lock:
        if _pipeline is None:
            from swap.config import PipelineConfig  # noqa: PLC0415 - heavy; only GPU workers need it
            from swap.pipeline import Pipeline  # noqa: PLC0415

            config = PipelineConfig.from_env()
            config.models_dir = settings.VISAGE_MODELS_DIR
            _pipeline = Pipeline(config)
        return _pipeline


def warm_up() -> None:
    pipeline = get_pipeline()
    if hasattr(pipeline, "warm_up"):
        pipeline.warm_up()
