"""Liveness (/livez), readiness (/healthz, also at /readyz) and Prometheus metrics (/metrics)."""

from __future__ import annotations

from datetime import timedelta

import django_rq
import redis
from django.conf import settings
from django.db import connection
from django.db.models import Count, Sum
from django.http import HttpResponse, JsonResponse
from django.utils import timezone
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Gauge, generate_latest

from moderation import selectors as moderation_selectors
from swap.serve import client as triton_client
from webapp.jobs.choices import JobState
from webapp.jobs.models import Job
from webapp.media import storage

PROBE_TIMEOUT_S = 2


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
    """Readiness: each dependency really probed now, with a short timeout (nothing cached)."""
    checks = {
        "database": _probe(_database),
        "redis": _probe(_redis),
        "s3": _probe(storage.probe),
        "moderation": _moderation_report(),
        "inference": inference_report(),
    }
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
    try:
        check()
        return "ok"
    except Exception as exc:  # noqa: BLE001 - a probe reports every failure, it never raises
        return f"error: {type(exc).__name__}: {exc}"


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
