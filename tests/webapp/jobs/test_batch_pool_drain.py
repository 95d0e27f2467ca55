"""The batch pool on spot nodes (deploy/k8s/base/gpu-batch-worker.yaml): a reclaim notice is a
SIGTERM to a worker that serves only the `batch` queue, mid-job. The job is handed back to the
batch queue with its attempt counted, another batch worker finishes it, and it is charged once:
one hold, one capture."""

from __future__ import annotations

import os
import signal
from decimal import Decimal

import django_rq
import pytest

from billing.models import LedgerEntry, PricePlan
from tests.helpers.waiting import wait_for_state
from tests.helpers.worker_process import start_worker
from tests.webapp.conftest import drain, post_job
from webapp.jobs import dispatch
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)

WORKER_EXIT_TIMEOUT_S = 180  # bounds a hung worker; not a speed expectation


def entries(job_id, kind: str) -> int:
    return LedgerEntry.objects.filter(job_id=job_id, kind=kind).count()


def stop_group(worker) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()


def test_a_spot_reclaim_mid_batch_job_requeues_it_for_another_batch_worker_charged_once(
    api_a, astronaut_pair, settings
):
    PricePlan.objects.filter(is_default=True).update(gpu_queue="batch")  # a bulk-work plan
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain([settings.MODERATION_QUEUE])
    job = Job.objects.get(id=job_id)
    assert job.queue == "batch" and job.state == "queued"
    batch = django_rq.get_queue("batch")
    assert dispatch.run_task_id(job.id, 1) in batch.job_ids
    balance_before = Decimal(api_a.get("/api/v1/me").json()["balance"])

    # The batch pool's worker: `--queues batch`, a short drain (the notice is short); the job
    # would take 10 minutes.
    spot = start_worker(queues="batch", VISAGE_FAULT_PAUSE_S="600", VISAGE_WORKER_DRAIN_TIMEOUT_S="1")
    try:
        wait_for_state(job_id, "running", timeout_s=WORKER_EXIT_TIMEOUT_S)
        spot.send_signal(signal.SIGTERM)  # the node's reclaim notice
        assert spot.wait(timeout=WORKER_EXIT_TIMEOUT_S) == 0
    finally:
        stop_group(spot)

    handed_back = Job.objects.get(id=job_id)
    assert handed_back.state == "queued" and handed_back.attempts == 1
    assert dispatch.run_task_id(handed_back.id, 2) in batch.job_ids  # back on the batch queue
    for other in ("vip", "default"):
        assert not django_rq.get_queue(other).job_ids
    assert (entries(job_id, "hold"), entries(job_id, "capture")) == (1, 0)

    # Another batch worker (a fresh pod on another node) takes it and finishes.
    other = start_worker(queues="batch", burst=True)
    try:
        assert other.wait(timeout=WORKER_EXIT_TIMEOUT_S) == 0
    finally:
        stop_group(other)

    finished = Job.objects.get(id=job_id)
    assert finished.state == "succeeded", finished.error_message
    assert finished.attempts == 2
    assert (entries(job_id, "hold"), entries(job_id, "capture")) == (1, 1)
    me = api_a.get("/api/v1/me").json()
    assert Decimal(me["held"]) == 0
    charge = Decimal(api_a.get(f"/api/v1/jobs/{job_id}").json()["cost"]["charge"])
    assert charge > 0 and Decimal(me["balance"]) == balance_before - charge
