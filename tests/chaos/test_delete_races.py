"""Twenty DELETE and cancel requests for one job at once: never a 500, the job gone, its hold
released exactly once, nothing captured, its uploads deleted."""

from __future__ import annotations

import threading

import pytest
from django.conf import settings
from django.db import connection

from billing.models import LedgerEntry
from tests.chaos.conftest import assert_ledger_invariants
from tests.webapp.conftest import api_client_for, drain, post_job
from webapp.jobs.models import Job
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)

PARALLEL = 20


@pytest.mark.parametrize("stage", ["created", "queued"])
def test_parallel_deletes_and_cancels(api_a, funded_user, astronaut_pair, stage):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    if stage == "queued":
        drain([settings.MODERATION_QUEUE])
    assert Job.objects.get(id=job_id).state == stage
    clients = [api_client_for(funded_user) for _ in range(PARALLEL)]
    barrier = threading.Barrier(PARALLEL)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def hit(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            client = clients[index]
            if index % 2:
                response = client.delete(f"/api/v1/jobs/{job_id}")
            else:
                response = client.post(f"/api/v1/jobs/{job_id}/cancel")
            statuses.append(response.status_code)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=hit, args=(i,)) for i in range(PARALLEL)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert not errors, errors
    assert len(statuses) == PARALLEL
    assert set(statuses) <= {200, 204, 404, 409}, statuses
    assert 500 not in statuses
    assert not Job.objects.filter(id=job_id).exists()
    assert LedgerEntry.objects.filter(job_id=job_id, kind="release").count() == 1
    assert not LedgerEntry.objects.filter(job_id=job_id, kind="capture").exists()
    assert storage.list_keys(settings.S3_UPLOADS_BUCKET) == []
    assert_ledger_invariants(funded_user)
