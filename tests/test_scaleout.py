"""Scale-out: several workers, each a process group of its own, on one Redis, one PostgreSQL and one
S3, with jobs submitted through the web server over HTTP (bench/scaleout.py's run, small: 2
moderation + 2 GPU-step workers, 30 jobs). Every job is screened once, run once and charged once;
the ledger adds up; every worker took part; no process's connections grow with the jobs. The
timings are the bench's to print, never asserted here."""

from __future__ import annotations

import os
from collections import Counter
from decimal import Decimal

import pytest

from bench import scaleout

pytestmark = pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")),
    reason="measures PostgreSQL connections; run with DATABASE_URL=postgres://…",
)

JOBS = 30
# Most connections one worker process may hold. PostgreSQL: the worker's own (kept, CONN_MAX_AGE),
# the running job's heartbeat thread and the sweeper thread (each closed after use). Redis: the
# RQ connection, its command channel (pubsub), the enqueue of the next step, events, the cache.
WORKER_POSTGRES_MAX = 3
WORKER_REDIS_MAX = 8


@pytest.fixture(scope="module")
def report() -> scaleout.Report:
    return scaleout.run(moderation_workers=2, gpu_workers=2, jobs=JOBS, concurrency=4)


def test_every_job_is_screened_run_and_charged_exactly_once(report):
    assert report.states == Counter(succeeded=JOBS)
    assert len(report.dequeues) == JOBS  # no task of a job this run did not submit
    assert all(dequeues == Counter(screen=1, run=1) for dequeues in report.dequeues.values()), report.dequeues
    assert set(report.attempts.values()) == {1}
    assert all(entries == Counter(hold=1, capture=1) for entries in report.ledger.values()), report.ledger


def test_the_ledger_adds_up(report):
    assert report.captured > 0
    assert report.captured == report.balance_drop == report.charged
    assert report.held_after == Decimal(0)


def test_every_worker_takes_part(report):
    assert set(report.tasks_per_worker) == set(report.workers)
    moderation = [name for name, queues in report.workers.items() if queues == scaleout.MODERATION_QUEUES]
    gpu = [name for name in report.workers if name not in moderation]
    assert sum(report.tasks_per_worker[name] for name in moderation) == JOBS
    assert sum(report.tasks_per_worker[name] for name in gpu) == JOBS


def test_each_workers_connections_stay_bounded(report):
    for name in report.workers:
        assert 1 <= report.postgres_max[name] <= WORKER_POSTGRES_MAX, (name, report.postgres_max)
        assert 1 <= report.redis_max[name] <= WORKER_REDIS_MAX, (name, report.redis_max)
