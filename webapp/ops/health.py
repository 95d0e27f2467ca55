"""Liveness/readiness (/healthz) and Prometheus metrics (/metrics)."""

from __future__ import annotations

from datetime import timedelta

import django_rq
from django.conf import settings
from django.db import connection
from django.db.models import Count, Sum
from django.http import HttpResponse, JsonResponse
from django.utils import timezone
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Gauge, generate_latest

from moderation import selectors as moderation_selectors
from webapp.jobs.choices import JobState
from webapp.jobs.models import Job
from webapp.media import storage


def healthz(request):
    checks = {}
    try:
        connection.ensure_connection()
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001 - report, don't raise
        checks["database"] = f"error: {exc}"
    try:
        django_rq.get_connection("default").ping()
        checks["redis"] = "ok"
    except Exception as exc:  # noqa: BLE001
        checks["redis"] = f"error: {exc}"
    try:
        storage.ensure_buckets()
        checks["s3"] = "ok"
    except Exception as exc:  # noqa: BLE001
        checks["s3"] = f"error: {exc}"
    try:
        checks["moderation"] = moderation_selectors.readiness_report()
    except ImportError as exc:  # the web image carries no detectors (deploy/Containerfile): workers screen
        checks["moderation"] = f"not installed in this process ({exc.name})"
    healthy = all(v == "ok" for k, v in checks.items() if k in ("database", "redis", "s3"))
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", "checks": checks}, status=200 if healthy else 503
    )


def metrics(request):
    """Read from the database and Redis, so every web process reports the same numbers."""
    registry = CollectorRegistry()
    jobs = Gauge("visage_jobs", "Jobs by state", ["state"], registry=registry)
    for state, count in Job.objects.values_list("state").annotate(n=Count("id")).values_list("state", "n"):
        jobs.labels(state=state).set(count)
    queued = Gauge("visage_queue_length", "Jobs waiting in each RQ queue", ["queue"], registry=registry)
    for name in [settings.MODERATION_QUEUE, *settings.GPU_QUEUES, settings.WEBHOOK_QUEUE]:
        queued.labels(queue=name).set(django_rq.get_queue(name).count)
    finished = Job.objects.filter(state=JobState.SUCCEEDED)
    totals = finished.aggregate(
        gpu=Sum("gpu_seconds"), wall=Sum("wall_seconds"), frames=Sum("frames_processed")
    )
    Gauge("visage_gpu_seconds", "GPU seconds metered over all succeeded jobs", registry=registry).set(
        float(totals["gpu"] or 0)
    )
    Gauge("visage_wall_seconds", "Worker wall seconds over all succeeded jobs", registry=registry).set(
        float(totals["wall"] or 0)
    )
    Gauge("visage_frames", "Frames processed over all succeeded jobs", registry=registry).set(
        totals["frames"] or 0
    )
    hour_ago = timezone.now() - timedelta(hours=1)
    recent = Gauge(
        "visage_jobs_finished_last_hour", "Jobs that ended in the last hour", ["state"], registry=registry
    )
    for state, count in (
        Job.objects.filter(completed_at__gte=hour_ago)
        .values_list("state")
        .annotate(n=Count("id"))
        .values_list("state", "n")
    ):
        recent.labels(state=state).set(count)
    stale = Gauge(
        "visage_jobs_running_without_heartbeat",
        "Running jobs whose heartbeat is older than the timeout",
        registry=registry,
    )
    stale.set(
        Job.objects.filter(
            state=JobState.RUNNING,
            heartbeat_at__lt=timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S),
        ).count()
    )
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
