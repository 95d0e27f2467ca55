"""S3 frozen (SIGSTOP: connections open, nothing answers): requests fail fast with a 503
problem+json, /healthz says so, nothing is stored or charged, and all works again after SIGCONT."""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.test import Client

import tests.settings as test_settings
from billing.models import LedgerEntry
from tests.webapp.conftest import post_job
from webapp.jobs.models import Job
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def frozen_s3(settings, monkeypatch):
    server = getattr(test_settings, "_s3", None)
    if server is None:
        pytest.skip("S3_ENDPOINT points at an external server this test must not freeze")
    settings.S3_READ_TIMEOUT_S = 1.0
    settings.S3_CONNECT_TIMEOUT_S = 1.0
    settings.S3_RETRIES = 0
    monkeypatch.setattr(storage, "_client", None)  # a client with the short test timeouts
    storage.ensure_buckets()
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        yield server
    finally:
        os.kill(server.process.pid, signal.SIGCONT)
        storage._client = None  # the next test builds its own with the normal timeouts


def test_a_frozen_s3_fails_fast_with_503_and_charges_nothing(api_a, astronaut_pair, frozen_s3):
    source, target, _ = astronaut_pair
    started = time.monotonic()
    response = post_job(api_a, source, target)
    elapsed_s = time.monotonic() - started

    assert response.status_code == 503, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert response["Retry-After"]
    assert response.json()["code"] == "service_unavailable"
    assert Job.objects.count() == 0 and LedgerEntry.objects.filter(kind="hold").count() == 0
    print(f"POST /api/v1/jobs with S3 frozen answered 503 in {elapsed_s:.1f} s")

    health = Client().get("/healthz")
    assert health.status_code == 503
    assert health.json()["checks"]["s3"].startswith("error")
    assert health.json()["checks"]["database"] == "ok"


def test_after_the_freeze_jobs_are_accepted_again(api_a, astronaut_pair, settings, monkeypatch):
    server = getattr(test_settings, "_s3", None)
    if server is None:
        pytest.skip("S3_ENDPOINT points at an external server this test must not freeze")
    os.kill(server.process.pid, signal.SIGSTOP)
    os.kill(server.process.pid, signal.SIGCONT)
    source, target, _ = astronaut_pair
    assert post_job(api_a, source, target).status_code == 201
    assert Client().get("/healthz").json()["checks"]["s3"] == "ok"
