"""Liveness/readiness (/healthz); Prometheus metrics are in metrics.py."""

from __future__ import annotations

import django_rq
from django.db import connection
from django.http import JsonResponse

from moderation import selectors as moderation_selectors
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
    checks["moderation"] = moderation_selectors.readiness_report()
    healthy = all(v == "ok" for k, v in checks.items() if k in ("database", "redis", "s3"))
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", "checks": checks}, status=200 if healthy else 503
    )
