"""Every Prometheus metric Visage records, in one place.

prometheus-client multiprocess mode: web server worker processes and RQ workers each write their samples
under PROMETHEUS_MULTIPROC_DIR, and a scrape (webapp.ops.metrics_endpoint) merges them, so `/metrics`
reports the whole stack on one machine. The directory must be set before prometheus_client is
imported (visage_run and the test settings do that).

Labels are bounded by construction: routes are URL patterns, not paths; models and providers
come from the installed model registry; no user or job ids, ever.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import Counter, Gauge, Histogram

from . import context, tracing

logger = logging.getLogger(__name__)

# Seconds: a photo job takes seconds, a clip minutes; the tail matters most.
JOB_BUCKETS_S = (0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600, 1200, 1800, 3600)
HTTP_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10, 30)
WAIT_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
STAGE_BUCKETS_S = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
INFERENCE_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64)

# Every stage `visage_job_stage_seconds` may carry (the engine's own stages plus the job's I/O).
STAGES = (
    "screening",
    "download",
    "detect",
    "landmarks",
    "embed",
    "swap",
    "enhance",
    "paste",
    "encode",
    "upload",
    "output_screening",
)

HTTP_REQUEST_DURATION = Histogram(
    "visage_http_request_duration_seconds",
    "Time to answer an HTTP request, by URL pattern",
    ["route", "method", "status_class"],
    buckets=HTTP_BUCKETS_S,
)
JOB_DURATION = Histogram(
    "visage_job_duration_seconds",
    "Submit to final state (succeeded, failed, rejected, canceled)",
    ["kind", "mode", "outcome"],
    buckets=JOB_BUCKETS_S,
)
JOBS = Counter("visage_jobs", "Jobs that reached a final state", ["kind", "mode", "outcome"])
QUEUE_WAIT = Histogram(
    "visage_job_queue_wait_seconds",
    "Enqueued to started on an RQ queue, per attempt",
    ["queue"],
    buckets=WAIT_BUCKETS_S,
)
STAGE_DURATION = Histogram(
    "visage_job_stage_seconds", "Time a job spent in one stage", ["stage"], buckets=STAGE_BUCKETS_S
)
INFERENCE_DURATION = Histogram(
    "visage_inference_seconds",
    "Wall time of one model run (a batch), including the device sync",
    ["model", "provider"],
    buckets=INFERENCE_BUCKETS_S,
)
MODEL_FETCH_DURATION = Histogram(
    "visage_model_fetch_seconds",
    "Time a worker took to fetch a cold model from the S3 model cache (SHA-256 checked)",
    ["model"],
    buckets=(0.5, 1, 2, 5, 10, 30, 60, 120, 300),
)
INFERENCE_BATCH_SIZE = Histogram(
    "visage_inference_batch_size", "Items (faces, frames) per model run", ["model"], buckets=BATCH_BUCKETS
)
GPU_SECONDS = Counter(
    "visage_gpu_seconds",
    "Billed GPU seconds of succeeded runs (on a CPU build: the model calls' CPU time)",
    ["queue"],
)
MODERATION_DECISIONS = Counter(
    "visage_moderation_decisions",
    "Screening verdicts; `check` is the check that decided (none for allow)",
    ["stage", "decision", "check"],
)
BILLING_CAPTURED = Counter(
    "visage_billing_captured", "Credits captured, in the currency's minor units", ["currency"]
)
# Job events: a Redis fault never fails a transition; it is counted here instead.
JOB_EVENT_FAILURES = Counter(
    "visage_job_event_failures", "Job change events that could not be published to Redis", ["operation"]
)
# Set by GPU workers' NVML sampler (webapp.ops.gpu); absent where no GPU is present.
GPU_UTILIZATION = Gauge(
    "visage_gpu_utilization_ratio",
    "GPU busy fraction over the last sample period",
    ["gpu"],
    multiprocess_mode="livemax",
)
GPU_MEMORY_USED = Gauge(
    "visage_gpu_memory_used_bytes", "GPU memory in use", ["gpu"], multiprocess_mode="livemax"
)
GPU_MEMORY_TOTAL = Gauge(
    "visage_gpu_memory_total_bytes", "GPU memory installed", ["gpu"], multiprocess_mode="livemax"
)

MAX_LABEL_LENGTH = 64


def bounded(value: str | None, allowed: frozenset[str] | tuple[str, ...] | None = None) -> str:
    """A label value that cannot blow up cardinality: known values pass, anything else is `other`."""
    if not value:
        return "none"
    if allowed is not None:
        return value if value in allowed else "other"
    return value[:MAX_LABEL_LENGTH]


def observe_stage(stage: str, seconds: float) -> None:
    STAGE_DURATION.labels(stage=bounded(stage, STAGES)).observe(max(0.0, seconds))


@contextmanager
def timed_stage(stage: str) -> Iterator[None]:
    """Observe the enclosed block as `stage` (also when it raises: the time was spent): its log
    lines carry `stage`, one more line gives its duration, and a trace span when tracing is on."""
    start = time.perf_counter()
    try:
        with context.bound(stage=stage), tracing.span(f"stage {stage}", **{"visage.stage": stage}):
            yield
    finally:
        seconds = time.perf_counter() - start
        observe_stage(stage, seconds)
        logger.info(
            "stage %s: %.3f s", stage, seconds, extra={"stage": stage, "duration_s": round(seconds, 3)}
        )


def observe_engine_stages(stage_ms: dict) -> None:
    """The engine's per-stage milliseconds (SwapResult.timings_ms), for the stages we publish."""
    for stage, ms in stage_ms.items():
        if stage in STAGES and ms:
            observe_stage(stage, ms / 1000.0)


def observe_model_fetch(model: str, seconds: float, size_bytes: int) -> None:
    """The model cache's fetch observer (registered by webapp.jobs.engine)."""
    MODEL_FETCH_DURATION.labels(model=bounded(model)).observe(max(0.0, seconds))


def observe_inference(model: str, provider: str, seconds: float, batch_size: int | None) -> None:
    """The engine's inference observer (registered by webapp.jobs.engine; swap stays Django-free)."""
    model = bounded(model)
    INFERENCE_DURATION.labels(model=model, provider=bounded(provider)).observe(max(0.0, seconds))
    if batch_size:
        INFERENCE_BATCH_SIZE.labels(model=model).observe(batch_size)
