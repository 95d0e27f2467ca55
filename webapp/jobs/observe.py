"""What the job lifecycle tells Prometheus and the logs when a job ends.

Called by services right after the guarded UPDATE that ended a job, so each job is counted once:
only the caller whose transition moved the job gets here.
"""

from __future__ import annotations

import logging
import uuid

from billing import selectors as billing_selectors
from webapp.telemetry import metrics

from .choices import JobState
from .models import Job

logger = logging.getLogger(__name__)

OUTCOMES = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.REJECTED, JobState.CANCELED})
KINDS = frozenset({"image", "video"})
MODES = frozenset({"fast", "standard", "hq"})


def job_ended(job_id: uuid.UUID) -> None:
    row = (
        Job.objects.filter(id=job_id)
        .values(
            "state",
            "mode",
            "created_at",
            "completed_at",
            "target__kind",
            "error_code",
            "gpu_seconds",
            "queue",
        )
        .first()
    )
    if row is None or row["completed_at"] is None:
        return
    labels = dict(
        kind=metrics.bounded(row["target__kind"], KINDS),
        mode=metrics.bounded(row["mode"], MODES),
        outcome=metrics.bounded(row["state"], OUTCOMES),
    )
    duration_s = max(0.0, (row["completed_at"] - row["created_at"]).total_seconds())
    metrics.JOB_DURATION.labels(**labels).observe(duration_s)
    metrics.JOBS.labels(**labels).inc()
    if row["state"] == JobState.SUCCEEDED and row["gpu_seconds"]:
        metrics.GPU_SECONDS.labels(queue=metrics.bounded(row["queue"])).inc(float(row["gpu_seconds"]))
    logger.info(
        "job %s %s",
        job_id,
        row["state"],
        extra={
            "job_id": str(job_id),
            "outcome": row["state"],
            "duration_s": round(duration_s, 3),
            "error_code": row["error_code"] or None,
            **{k: labels[k] for k in ("kind", "mode")},
        },
    )


def credits_captured(charge) -> None:
    """A capture, in the currency's minor units (cents for USD), so rates add up exactly."""
    plan = charge.account.plan or billing_selectors.default_plan()
    minor_units = int((charge.amount * (10**plan.minor_unit_exponent)).to_integral_value())
    metrics.BILLING_CAPTURED.labels(currency=metrics.bounded(charge.currency)).inc(max(0, minor_units))
