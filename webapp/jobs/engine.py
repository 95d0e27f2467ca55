"""The swap pipeline, built once per worker process and kept warm (never per job)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from django.conf import settings

from swap.config import PipelineConfig
from swap.inference import clock as inference_clock
from swap.models import canary, s3cache
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
            config.runtime = replace(
                config.runtime, inference=settings.VISAGE_INFERENCE, triton_url=settings.VISAGE_TRITON_URL
            )
            config.canary_percent = settings.VISAGE_CANARY_PERCENT
            # With Triton down this raises InferenceUnavailable: the run is retried, never charged.
            _pipeline = Pipeline(config)
            # Per-model inference timings to Prometheus; the engine itself stays platform-free.
            inference_clock.add_observer(metrics.observe_inference)
            s3cache.add_observer(metrics.observe_model_fetch)  # cold models fetched on first use
        return _pipeline


def warm_up() -> None:
    get_pipeline().warm_up()


def reset_pipeline() -> None:
    """Forget the pipeline (tests that change the engine settings; the next job builds a new one)."""
    global _pipeline
    with _lock:
        _pipeline = None


@contextmanager
def job_routing(job_id: uuid.UUID) -> Iterator[canary.Routing]:
    """Around every task that runs models for a job: which model versions it runs (canary router,
    a stable hash of the job id, so every segment and retry of a job runs the same versions)."""
    with canary.job_routing(
        job_id, models_dir=settings.VISAGE_MODELS_DIR, percent=settings.VISAGE_CANARY_PERCENT
    ) as routing:
        yield routing


def model_versions() -> dict[str, int]:
    """{model: version} the current job ran, for its record (engine_notes["model_versions"])."""
    return canary.versions_ran(canary.current(), get_pipeline().backends, settings.VISAGE_MODELS_DIR)


def models_used() -> list[dict]:
    """Every model the pipeline runs, with version and licence (engine_notes["models"])."""
    return get_pipeline().models_used()
