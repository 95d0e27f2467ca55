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
    # The face geometry runs locally (LiteRT); nothing Triton serves ran (classical swapper).
    assert set(job.engine_notes["model_versions"]) <= {"blazeface_full_range", "face_mesh_468"}


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


def run_due_retries() -> None:
    """RQ's retries waiting out their backoff, run now (the scheduler would, later)."""
    import django_rq
    from django.conf import settings

    for name in settings.GPU_QUEUES:
        queue = django_rq.get_queue(name)
        for task_id in queue.scheduled_job_registry.get_job_ids():
            queue.scheduled_job_registry.remove(task_id)
            queue.enqueue_job(queue.fetch_job(task_id))


def test_a_long_inference_outage_runs_a_job_at_most_max_attempts_and_says_why(
    api_a, astronaut_pair, triton_down
):
    """Workers, RQ's retries and the sweeper all keep going through the outage: the job's row
    counts the attempts, so it runs at most VISAGE_JOB_MAX_ATTEMPTS times, then fails naming the
    service that was down, and nothing is charged."""
    from billing.models import LedgerEntry
    from webapp.jobs.services import maintenance

    triton_down.JOB_MAX_ATTEMPTS = 3
    triton_down.ENQUEUE_GRACE_S = 0  # the sweeper looks at every queued job at once
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    for _round in range(8):
        drain()
        maintenance.jobs_sweep_stale()
        run_due_retries()
    drain()
    job = Job.objects.get(id=job_id)
    assert job.attempts <= 3
    assert job.state == "failed" and job.error_code == "inference_unavailable"
    assert job.error_message.startswith("The inference server was unavailable")
    assert not LedgerEntry.objects.filter(job_id=job_id, kind="capture").exists()
    assert LedgerEntry.objects.filter(job_id=job_id, kind="release").count() == 1


def test_faces_answers_503_while_the_inference_server_is_down_and_recovers_with_it(
    api_a, astronaut_pair, triton_down, monkeypatch
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from webapp.api.faces import reset_face_detector

    source, _, _ = astronaut_pair
    # The web process configured as a deployment does it (the environment), like the settings say.
    monkeypatch.setenv("VISAGE_INFERENCE", "triton")
    monkeypatch.setenv("VISAGE_TRITON_URL", triton_down.VISAGE_TRITON_URL)
    reset_face_detector()
    try:
        down = api_a.post("/api/v1/faces", {"image": SimpleUploadedFile("me.png", source)})
        assert down.status_code == 503, down.content
        assert down["Content-Type"].startswith("application/problem+json")
        assert down.json()["code"] == "service_unavailable" and down["Retry-After"]

        # The inference service is back (here: the deployment switched to local inference): the next
        # request answers, nothing broken was kept.
        triton_down.VISAGE_INFERENCE = "local"
        monkeypatch.setenv("VISAGE_INFERENCE", "local")
        back = api_a.post("/api/v1/faces", {"image": SimpleUploadedFile("me.png", source)})
        assert back.status_code == 200, back.content
        assert len(back.json()["faces"]) == 1
    finally:
        reset_face_detector()
