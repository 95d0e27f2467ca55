"""S3 frozen (SIGSTOP: connections open, nothing answers): requests fail fast with a 503
problem+json, /healthz says so, nothing is stored or charged, and all works again after SIGCONT."""

from __future__ import annotations

import json
import os
import signal
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

import tests.settings as test_settings
from billing.models import LedgerEntry
from tests.helpers.waiting import wait_until
from tests.webapp.conftest import post_job
from webapp.jobs import examples
from webapp.jobs.models import Job
from webapp.jobs.services import stored_files
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


@pytest.fixture
def s3_server():
    server = getattr(test_settings, "_s3", None)
    if server is None:
        pytest.skip("S3_ENDPOINT points at an external server this test must not freeze")
    storage.ensure_buckets()
    yield server
    os.kill(server.process.pid, signal.SIGCONT)


def test_a_submit_into_a_frozen_s3_answers_503_and_the_sweep_leaves_nothing_of_it(
    api_a, funded_user, astronaut_pair, s3_server, monkeypatch
):
    """With the production retry policy (no test timeouts): the submit fails in seconds, and the
    face photo that lands after S3 thaws, with no job row, is deleted by the orphan sweep."""
    monkeypatch.setattr(storage, "_client", None)  # a client with the configured policy
    source, target, _ = astronaut_pair
    kept_id = post_job(api_a, source, target).json()["id"]  # a live job: its originals must stay

    os.kill(s3_server.process.pid, signal.SIGSTOP)
    started = time.monotonic()
    response = post_job(api_a, source, target)
    elapsed_s = time.monotonic() - started
    os.kill(s3_server.process.pid, signal.SIGCONT)
    assert response.status_code == 503, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "service_unavailable"
    print(f"POST /api/v1/jobs into a frozen S3 answered 503 in {elapsed_s:.1f} s")
    assert Job.objects.count() == 1

    prefix = f"{funded_user.pk}/"
    kept = {key for key in storage.list_keys(settings.S3_UPLOADS_BUCKET, prefix) if kept_id in key}
    orphans = wait_until(  # the request S3 took before it froze lands once it thaws
        lambda: [key for key in storage.list_keys(settings.S3_UPLOADS_BUCKET, prefix) if kept_id not in key],
        timeout_s=30,
        what="the frozen upload to land",
    )
    assert orphans[0].endswith("/source")

    assert stored_files.uploads_sweep_orphans() == 0  # within the grace period: a submit may be in flight
    later = timezone.now() + timedelta(seconds=settings.UPLOAD_ORPHAN_GRACE_S + 5)
    # At least these: a frozen upload of an earlier test (test_a_frozen_s3_fails_fast_…) may land
    # after that test ended, in another test's bucket, and is an orphan of the same kind.
    assert stored_files.uploads_sweep_orphans(now=later) >= len(orphans)
    assert set(storage.list_keys(settings.S3_UPLOADS_BUCKET, prefix)) == kept


def test_the_landing_page_shows_its_examples_while_s3_is_frozen(s3_server, monkeypatch):
    manifest = {"inputs": "x", "examples": [
        {"slug": "cameraman", "caption": "The astronaut’s face in the cameraman’s photo.", "mode": "hq",
         "swapper": "inswapper", "seconds": 1.0, "width": 512, "height": 512},
    ]}
    storage.put_bytes(settings.S3_RESULTS_BUCKET, examples.MANIFEST, json.dumps(manifest).encode(), "application/json")
    try:
        Client().get("/")  # a visitor before the freeze: the page reads the examples in the background
        examples.refresh_join()
        os.kill(s3_server.process.pid, signal.SIGSTOP)
        page = Client().get("/").content.decode()
        assert 'id="examples"' in page and "cameraman" in page
    finally:
        os.kill(s3_server.process.pid, signal.SIGCONT)
        storage.delete(settings.S3_RESULTS_BUCKET, examples.MANIFEST)
        cache.delete(examples.SHOWN_CACHE_KEY)
