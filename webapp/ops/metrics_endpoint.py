"""`/metrics` (and a worker's own metrics port): what every process recorded, plus what is read
at scrape time from Redis/RQ and from indexed queries.

Recorded metrics (webapp.telemetry.metrics) come from prometheus-client's multiprocess files when
PROMETHEUS_MULTIPROC_DIR is set (every process `visage_run` starts shares one directory, so the
web's `/metrics` reports web, moderation and GPU workers as one target). Nothing here scans the
jobs table: the job-state gauges count only the active states through the `state` index, so a
scrape costs the same with a hundred jobs or millions.
"""

from __future__ import annotations

import hmac
import logging
import os
import time
from datetime import UTC, datetime

import django_rq
from django.conf import settings
from django.db.models import Count, Min
from django.http import HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from rq import Worker

from billing import metrics as billing_metrics
from webapp.jobs.choices import JobState
from webapp.jobs.models import Job
from webapp.media import storage

logger = logging.getLogger(__name__)

ACTIVE_STATES = (JobState.CREATED, JobState.SCREENING, JobState.REVIEW, JobState.QUEUED, JobState.RUNNING)
WORKER_STATES = ("idle", "busy", "suspended")


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def recorded_registry() -> CollectorRegistry:
    """What this process (or, in multiprocess mode, every process of the stack) recorded."""
    if multiprocess_dir() is None:
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry


def all_queues() -> list[str]:
    return [settings.MODERATION_QUEUE, *settings.GPU_QUEUES, settings.WEBHOOK_QUEUE]


class StackCollector:
    """Read at scrape time: RQ queue depths and registered workers (Redis, O(queues + workers)),
    active jobs by state and the oldest review (indexed, O(jobs in flight)), and whether the
    database, Redis and S3 answered. A dependency outage shows as visage_dependency_up 0, never as
    a failed scrape."""

    def collect(self):
        up = GaugeMetricFamily(
            "visage_dependency_up", "1 when the dependency answered this scrape", labels=["dependency"]
        )
        yield from self._redis(up)
        yield from self._database(up)
        up.add_metric(["s3"], self._s3_up())
        yield up

    def _redis(self, up):
        depth = GaugeMetricFamily("visage_queue_depth", "Tasks waiting on each RQ queue", labels=["queue"])
        workers = GaugeMetricFamily(
            "visage_workers",
            "RQ workers alive (heartbeat within RQ's TTL) by queue set and state",
            labels=["queues", "state"],
        )
        try:
            redis = django_rq.get_connection("default")
            for name in all_queues():
                depth.add_metric([name], django_rq.get_queue(name).count)
            counts: dict[tuple[str, str], int] = {}
            for worker in Worker.all(connection=redis):
                state = str(getattr(worker.get_state(), "value", worker.get_state()))
                key = (",".join(worker.queue_names()), state if state in WORKER_STATES else "other")
                counts[key] = counts.get(key, 0) + 1
            for (queues, state), count in sorted(counts.items()):
                workers.add_metric([queues, state], count)
            up.add_metric(["redis"], 1)
        except Exception:
            logger.warning("metrics: Redis unreachable", exc_info=True)
            up.add_metric(["redis"], 0)
        yield depth
        yield workers

    def _database(self, up):
        """Only the active states are counted (an index range on `state`, proportional to the work
        in flight, never to the table); finished jobs are counted by visage_jobs_total."""
        active = GaugeMetricFamily("visage_jobs_active", "Jobs not yet finished, by state", labels=["state"])
        review_age = GaugeMetricFamily(
            "visage_moderation_review_oldest_seconds", "Age of the oldest job waiting in moderator review"
        )
        try:
            counts = dict(
                Job.objects.order_by()
                .filter(state__in=ACTIVE_STATES)
                .values_list("state")
                .annotate(n=Count("id"))
                .values_list("state", "n")
            )
            for state in ACTIVE_STATES:
                active.add_metric([state], counts.get(state, 0))
            oldest = (
                Job.objects.order_by()
                .filter(state=JobState.REVIEW)
                .aggregate(oldest=Min("created_at"))["oldest"]
            )
            review_age.add_metric([], (datetime.now(UTC) - oldest).total_seconds() if oldest else 0.0)
            up.add_metric(["database"], 1)
        except Exception:
            logger.warning("metrics: database unreachable", exc_info=True)
            up.add_metric(["database"], 0)
        yield active
        yield review_age

    @staticmethod
    def _s3_up() -> int:
        try:
            storage.client().bucket_exists(settings.S3_RESULTS_BUCKET)
            return 1
        except Exception:
            logger.warning("metrics: S3 unreachable", exc_info=True)
            return 0


def scrape_registry(*, with_stack_state: bool = True) -> CollectorRegistry:
    """A registry for one scrape: recorded metrics, plus queue and job state when asked."""
    registry = CollectorRegistry()
    recorded = recorded_registry()
    registry.register(_Forward(recorded))
    if with_stack_state:
        registry.register(StackCollector())
        billing_metrics.add_to(registry)
    return registry


class _Forward:
    def __init__(self, registry: CollectorRegistry):
        self.registry = registry

    def collect(self):
        yield from self.registry.collect()


def metrics_key_given(request) -> bool:
    """The request carries VISAGE_METRICS_KEY as a bearer token (always true when none is set: development)."""
    key = settings.METRICS_KEY
    if not key:
        return True
    header = request.headers.get("Authorization", "")
    scheme, _, supplied = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(supplied.strip().encode(), key.encode())


def metrics_view(request):
    if not metrics_key_given(request):
        response = HttpResponse(
            "metrics need Authorization: Bearer <VISAGE_METRICS_KEY>\n", status=401, content_type="text/plain"
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    started = time.perf_counter()
    body = generate_latest(scrape_registry())
    response = HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
    response["X-Scrape-Seconds"] = f"{time.perf_counter() - started:.4f}"
    return response
