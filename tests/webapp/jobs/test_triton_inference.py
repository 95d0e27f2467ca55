"""VISAGE_INFERENCE=triton on the job side: Triton down is a transient fault (retried, never
charged), /healthz reports it, and every job records the model versions it ran."""

from __future__ import annotations

import pytest

from swap.inference import triton_client
from swap.serve import launcher
from tests.webapp.conftest import drain, post_job
from webapp.jobs import engine
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def triton_down(settings):
    """Workers configured for a Triton that is not there (nothing listens on that port)."""
    settings.VISAGE_INFERENCE = "triton"
    settings.VISAGE_TRITON_URL = f"grpc://127.0.0.1:{launcher.free_port()}"
    engine.reset_pipeline()
    triton_client.clear()
    yield settings
    engine.reset_pipeline()  # the next test builds the local pipeline again
    triton_client.clear()


def test_triton_down_requeues_the_job_and_never_charges(api_a, astronaut_pair, triton_down):
    import django_rq

    from billing.models import LedgerEntry

    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain()
    job = Job.objects.get(id=job_id)
    assert job.state == "queued", (job.state, job.error_code, job.error_message)  # not failed
    assert not LedgerEntry.objects.filter(job_id=job_id, kind="capture").exists()
    queue = django_rq.get_queue(job.queue)
    (retry,) = queue.scheduled_job_registry.get_job_ids()  # RQ's retry, waiting out its backoff

    # Triton is back (here: the deployment switched to local inference): the retry succeeds, once.
    triton_down.VISAGE_INFERENCE = "local"
    engine.reset_pipeline()
    queue.scheduled_job_registry.remove(retry)
    queue.enqueue_job(queue.fetch_job(retry))  # don't wait for the backoff
    drain()
    job.refresh_from_db()
    assert job.state == "succeeded"
    assert LedgerEntry.objects.filter(job_id=job_id, kind="capture").count() == 1
    assert job.engine_notes["model_versions"] == {}  # dlib + classical: nothing versioned ran


def test_healthz_reports_triton_readiness(triton_down):
    from django.test import Client

    health = Client().get("/healthz").json()
    inference = health["checks"]["inference"]
    assert inference["backend"] == "triton" and inference["ready"] is False
    assert "url" not in inference  # public: which dependency, never where (that goes to the log)
    # The web tier still takes jobs (they wait and are retried): not part of the status.
    assert health["status"] == "ok"


def test_healthz_reports_local_inference():
    from django.test import Client

    assert Client().get("/healthz").json()["checks"]["inference"] == {"backend": "local"}
