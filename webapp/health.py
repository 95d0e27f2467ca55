"""Liveness/readiness (/healthz) and Prometheus metrics (/metrics)."""

from __future__ import annotations

import django_rq
from django.conf import settings
from django.db import connection
from django.http import HttpResponse, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Gauge, generate_latest

from . import storage
from .models import Job


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
        from moderation import selectors as moderation_selectors  # noqa: PLC0415

        checks["moderation"] = moderation_selectors.readiness_report()
    except (ImportError, AttributeError):
        pass
    healthy = all(v == "ok" for k, v in checks.items() if k in ("database", "redis", "s3"))
    return JsonResponse({"status": "ok" if healthy else "degraded", "checks": checks}, status=200 if healthy else 503)


def metrics(request):
    registry = CollectorRegistry()
    jobs = Gauge("visage_jobs", "Jobs by state", ["state"], registry=registry)
    for state, count in _job_counts().items():
        jobs.labels(state=state).set(count)
    queued = Gauge("visage_queue_length", "RQ queue length", ["queue"], registry=registry)
    for name in [settings.MODERATION_QUEUE, *settings.GPU_QUEUES, settings.WEBHOOK_QUEUE]:
        queued.labels(queue=name).set(django_rq.get_queue(name).count)
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


def _job_counts() -> dict[str, int]:
    from django.db.models import Count  # noqa: PLC0415

    return dict(Job.objects.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
