"""What observability costs: requests/s of a job-status GET with HTTP metrics off, with
our middleware and with django-prometheus's, and the time of one /metrics scrape as the jobs table
grows to 100,000 rows (with a Charge per succeeded job, dated when it completed).

    python bench/metrics_overhead.py [--requests 3000] [--jobs 100000]

Runs in-process through Django's WSGI handler (no network, so the middleware's share is not
hidden by socket time) on a fresh SQLite database, with the embedded Redis and S3 servers the
tests use. django-prometheus is optional (pip install '.[bench]'); without it that row is skipped.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
_data = Path(tempfile.mkdtemp(prefix="visage-bench-metrics-"))
os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(_data / "metrics")
(_data / "metrics").mkdir()
os.environ["DATABASE_URL"] = f"sqlite:///{_data / 'bench.sqlite3'}"
os.environ["VISAGE_THROTTLE_READ"] = "100000000/min"  # measure the middleware, not the throttle
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")  # embedded Redis + S3 on free ports


def setup_django():
    import django

    django.setup()
    from django.core.management import call_command

    started = time.perf_counter()
    call_command("migrate", interactive=False, verbosity=0)
    print(f"(database migrated in {time.perf_counter() - started:.0f} s)", flush=True)


def requests_per_second(client, url: str, headers: dict, count: int) -> float:
    for _ in range(min(200, count)):  # warm-up: imports, first queries, connection
        assert client.get(url, headers=headers).status_code == 200
    rounds = []
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(count):
            client.get(url, headers=headers)
        rounds.append(count / (time.perf_counter() - started))
    return statistics.median(rounds)


def middleware_overhead(count: int) -> None:
    from decimal import Decimal

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client, override_settings

    from billing import services as billing_services
    from webapp.accounts import services as account_services
    from webapp.jobs.models import Job, Upload

    user = get_user_model().objects.create_user(username="bench", password="bench-pass-123")
    billing_services.account_top_up(user=user, amount=Decimal("100"), actor=None, reason="bench")
    _, key = account_services.api_token_create(user=user, name="bench")
    upload = Upload.objects.create(
        owner=user,
        role="target",
        kind="image",
        media_type="image/jpeg",
        s3_key="bench/target.jpg",
        size_bytes=1,
        sha256="0" * 64,
        width=64,
        height=64,
    )
    job = Job.objects.create(owner=user, source=upload, target=upload, state="succeeded")
    url, headers = f"/api/v1/jobs/{job.id}", {"Authorization": f"Bearer {key}"}

    ours = list(settings.MIDDLEWARE)
    off = [m for m in ours if m != "webapp.ops.http_metrics.HttpMetricsMiddleware"]
    variants = {"metrics off": off, "our middleware": ours}
    try:
        import django_prometheus  # noqa: F401 - only whether it is installed

        variants["django-prometheus"] = [
            "django_prometheus.middleware.PrometheusBeforeMiddleware",
            *off,
            "django_prometheus.middleware.PrometheusAfterMiddleware",
        ]
    except ImportError:
        print("django-prometheus not installed (pip install '.[bench]'): its row is skipped")
    results = {}
    for name, middleware in variants.items():
        with override_settings(MIDDLEWARE=middleware):
            results[name] = requests_per_second(Client(), url, headers, count)
        print(f"(measured {name})", flush=True)
    base = results["metrics off"]
    print(f"\nGET /api/v1/jobs/<id>, {count} requests x 3 rounds (median), in-process WSGI:")
    for name, rps in results.items():
        cost_us = (1 / rps - 1 / base) * 1e6
        print(f"  {name:18s} {rps:8.0f} req/s   {cost_us:+7.1f} µs/request vs off")


def middleware_alone(count: int) -> None:
    """Each middleware around a view that does nothing, rounds interleaved (A B C A B C …), so the
    figure is the middleware's own cost and a busy machine's drift hits every variant alike."""
    from django.http import HttpResponse
    from django.test import RequestFactory
    from django.urls import resolve

    from webapp.ops.http_metrics import HttpMetricsMiddleware

    path = "/api/v1/jobs/00000000-0000-0000-0000-000000000000"
    match = resolve(path)

    def view(request):
        request.resolver_match = match  # what URL resolution leaves on a real request
        return HttpResponse(b"{}", content_type="application/json")

    chains = {"metrics off": view, "our middleware": HttpMetricsMiddleware(view)}
    try:
        from django_prometheus.middleware import PrometheusAfterMiddleware, PrometheusBeforeMiddleware

        chains["django-prometheus"] = PrometheusBeforeMiddleware(PrometheusAfterMiddleware(view))
    except ImportError:
        pass
    factory = RequestFactory()
    timings: dict[str, list[float]] = {name: [] for name in chains}
    for _ in range(7):
        for name, chain in chains.items():
            requests_ = [factory.get(path) for _ in range(count)]
            started = time.perf_counter()
            for request in requests_:
                chain(request)
            timings[name].append((time.perf_counter() - started) / count * 1e6)
    base = statistics.median(timings["metrics off"])
    print(f"\nThe middleware alone ({count} requests x 7 interleaved rounds, median µs per request):")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"  {name:18s} {median:8.1f} µs   {median - base:+7.1f} µs vs off")


def make_jobs(user, count: int) -> None:
    """`count` finished jobs, one a second back from now; each succeeded one has its capture and
    Charge (the rows /metrics' billing gauges read), dated when the job completed."""
    from datetime import timedelta
    from decimal import Decimal

    from django.db.models import OuterRef, Subquery
    from django.utils import timezone

    from billing.models import Account, Charge, LedgerEntry
    from webapp.jobs.models import Job, Upload

    upload = Upload.objects.filter(owner=user).first()
    account, _ = Account.objects.get_or_create(user=user)
    now = timezone.now() - timedelta(seconds=Job.objects.count())
    states = ["succeeded"] * 90 + ["failed"] * 5 + ["rejected"] * 3 + ["canceled"] * 2
    one = Decimal("0.1")
    for start in range(0, count, 5000):
        jobs = Job.objects.bulk_create(
            Job(
                owner=user,
                source=upload,
                target=upload,
                state=states[i % len(states)],
                completed_at=now - timedelta(seconds=i),
                gpu_seconds=1,
            )
            for i in range(start, min(count, start + 5000))
        )
        succeeded = [job for job in jobs if job.state == "succeeded"]
        entries = LedgerEntry.objects.bulk_create(
            LedgerEntry(account=account, kind="capture", amount=one, job_id=job.id) for job in succeeded
        )
        Charge.objects.bulk_create(
            Charge(
                job_id=job.id, account=account, capture_entry=entry, frames=1, width=64, height=64,
                mode="standard", resolution="720p", resolution_coefficient=1, mode_weight=1,
                gpu_seconds=1, gpu_seconds_per_frame=1, wall_seconds=1, unit_price=one,
                minimum_charge=one, computed_amount=one, held_amount=one, amount=one,
                released_amount=0, currency="USD", capped=job.id.int % 10 == 0,
            )
            for job, entry in zip(succeeded, entries, strict=True)
        )
    # auto_now_add dated every charge now: date each one when its job completed.
    Charge.objects.update(
        created_at=Subquery(Job.objects.filter(id=OuterRef("job_id")).values("completed_at")[:1])
    )


def scrape_time(total_jobs: int) -> None:
    from django.contrib.auth import get_user_model
    from django.db.models import Count, Sum
    from django.test import Client

    from billing.models import Charge
    from webapp.jobs.models import Job, Upload

    user, _ = get_user_model().objects.get_or_create(username="bench")
    if not Upload.objects.filter(owner=user).exists():
        Upload.objects.create(
            owner=user,
            role="target",
            kind="image",
            media_type="image/jpeg",
            s3_key="bench/target.jpg",
            size_bytes=1,
            sha256="0" * 64,
            width=64,
            height=64,
        )
    client = Client()
    print("\n/metrics scrape time (median of 20) as the jobs table grows:")
    print(f"  {'jobs':>8s} {'charges':>8s} {'scrape ms':>10s} {'old full-scan queries ms':>26s}")
    have = Job.objects.count()
    for target in sorted({1_000, 10_000, total_jobs}):
        if target > have:
            make_jobs(user, target - have)
            have = target
        for _ in range(3):
            client.get("/metrics")
        times = []
        for _ in range(20):
            started = time.perf_counter()
            assert client.get("/metrics").status_code == 200
            times.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()  # what the previous /metrics ran on every scrape
        list(Job.objects.values_list("state").annotate(n=Count("id")))
        Job.objects.filter(state="succeeded").aggregate(
            Sum("gpu_seconds"), Sum("wall_seconds"), Sum("frames_processed")
        )
        old_ms = (time.perf_counter() - started) * 1000
        charges = Charge.objects.count()
        print(f"  {have:8d} {charges:8d} {statistics.median(times):10.1f} {old_ms:26.1f}")
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        client.get("/metrics")
    with connection.cursor() as cursor:
        for query in queries.captured_queries:
            if connection.vendor == "sqlite" and query["sql"].lstrip().upper().startswith("SELECT"):
                cursor.execute("EXPLAIN QUERY PLAN " + query["sql"])
                print("  plan:", "; ".join(row[-1] for row in cursor.fetchall()))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=3000, help="full-stack GETs per round (0: skip)")
    parser.add_argument("--jobs", type=int, default=100_000)
    args = parser.parse_args()
    setup_django()
    middleware_alone(5000)
    if args.requests:
        middleware_overhead(args.requests)
    scrape_time(args.jobs)


if __name__ == "__main__":
    main()
