"""Liveness (/livez) and readiness (/healthz, also at /readyz); Prometheus metrics are in metrics_endpoint.py."""

from __future__ import annotations

import logging

import redis
from django.conf import settings
from django.db import connection
from django.http import JsonResponse

from moderation import selectors as moderation_selectors
from swap.inference import triton_client
from webapp.media import storage

from .metrics_endpoint import metrics_key_given

PROBE_TIMEOUT_S = 2
UNAVAILABLE = "error: unavailable"
PRIVATE_KEYS = ("url", "error")

logger = logging.getLogger(__name__)


def livez(request):
    """Liveness: this process answers. Never checks dependencies (a Redis outage must not make
    Kubernetes restart every web pod)."""
    return JsonResponse({"status": "ok"})


def _moderation_report() -> dict | str:
    try:
        return moderation_selectors.readiness_report()
    except ImportError as exc:  # the web image carries no detectors (deploy/Containerfile): workers screen
        return f"not installed in this process ({exc.name})"


def healthz(request):
    """Readiness: each dependency really probed now, with a short timeout (nothing cached).

    Anyone (a load balancer, a kubelet) sees whether the database, Redis and S3 answer. Which
    moderation checks are on, how many blocked terms and protected people there are, and what
    Triton serves are for operators only (the metrics key, or a staff session): to anyone else they
    say which check to get past (OCR off: text goes through; no protected people: anyone's face)."""
    checks = {
        "database": _probe(_database),
        "redis": _probe(_redis),
        "s3": _probe(storage.probe),
    }
    if metrics_key_given(request) or request.user.is_staff:
        checks["moderation"] = _without_details(_moderation_report())
        checks["inference"] = _without_details(inference_report())
    healthy = all(checks[name] == "ok" for name in ("database", "redis", "s3"))
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", "checks": checks}, status=200 if healthy else 503
    )


def inference_report() -> dict:
    """Where the models run. With Triton: is it ready, which models and versions it serves, and any
    model that failed to load, by name. Reported, not part of `status`: the web tier keeps taking
    jobs while Triton is down (they wait in the queue and are retried, never charged)."""
    if settings.VISAGE_INFERENCE != "triton":
        return {"backend": "local"}
    return {"backend": "triton", **triton_client.readiness(settings.VISAGE_TRITON_URL)}


def _probe(check) -> str:
    """'ok' or 'error: unavailable'. /healthz is public: it says which dependency is down, never
    how (host names, ports, client messages go to the log, where operators read them)."""
    try:
        check()
        return "ok"
    except Exception:
        logger.warning("readiness probe %s failed", getattr(check, "__name__", check), exc_info=True)
        return UNAVAILABLE


def _without_details(report):
    """A report with its internal addresses and error texts taken out (logged instead)."""
    if isinstance(report, str):
        if report.startswith("error"):
            logger.warning("readiness: %s", report)
            return UNAVAILABLE
        return report
    if isinstance(report, dict):
        if report.get("error"):
            logger.warning("readiness: %s", report["error"])
        return {key: _without_details(value) for key, value in report.items() if key not in PRIVATE_KEYS}
    return report


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _redis() -> None:
    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=PROBE_TIMEOUT_S, socket_timeout=PROBE_TIMEOUT_S
    )
    try:
        client.ping()
    finally:
        client.close()
