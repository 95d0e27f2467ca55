"""Chaos fixtures: a Redis server of this test's own that can be killed and restarted, and the
ledger invariants every chaos test ends with."""

from __future__ import annotations

from decimal import Decimal

import pytest

from billing import selectors
from billing.models import LedgerEntry
from tests.webapp.conftest import (  # noqa: F401 - the platform's fixtures, re-exported for this package
    api_a,
    api_b,
    astronaut_pair,
    astronaut_rgb,
    clean_redis_and_buckets,
    fcm_standin,
)
from webapp.jobs.models import Job
from webapp.jobs.states import TERMINAL_STATES
from webapp.ops import embedded


class KillableRedis:
    """A real redis-server on a fixed free port: kill() is a crash, stop() a clean shutdown, start() a
    restart (with what it had only when `persist`, as production's append-only file keeps it)."""

    def __init__(self, directory, *, persist: bool = False):
        self.directory = directory
        self.port = embedded.free_port()
        self.persist = persist
        self.server = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.server = embedded.start_redis(self.directory, port=self.port, persist=self.persist)

    def kill(self) -> None:
        self.server.process.kill()
        self.server.process.wait()

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture
def own_redis(settings, tmp_path):
    """Point the queues, the cache and the probes at a Redis this test may kill."""
    yield from _use_redis(settings, KillableRedis(tmp_path / "redis"))


@pytest.fixture
def own_persistent_redis(settings, tmp_path):
    """The same, with production's append-only file: a restart brings back what it held."""
    yield from _use_redis(settings, KillableRedis(tmp_path / "redis", persist=True))


def _use_redis(settings, redis: KillableRedis):
    redis.start()
    settings.REDIS_URL = redis.url
    settings.RQ_QUEUES = {name: {**config, "URL": redis.url} for name, config in settings.RQ_QUEUES.items()}
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": redis.url}}
    yield redis
    if redis.server is not None:
        redis.server.stop()


def assert_ledger_invariants(user) -> None:
    """Every job holds once; a succeeded job is captured once, any other final job released once and
    never captured; once all jobs are final, nothing is held."""
    jobs = list(Job.objects.filter(owner=user))
    for job in jobs:
        entries = LedgerEntry.objects.filter(job_id=job.id)
        assert entries.filter(kind="hold").count() == 1, job.id
        if job.state == "succeeded":
            assert entries.filter(kind="capture").count() == 1, job.id
        elif job.state in TERMINAL_STATES:
            assert entries.filter(kind="capture").count() == 0, job.id
            assert entries.filter(kind="release").count() == 1, job.id
    if all(job.state in TERMINAL_STATES for job in jobs):
        assert selectors.account_balance(user=user).held == Decimal("0")
