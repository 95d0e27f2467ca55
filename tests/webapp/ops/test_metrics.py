"""/metrics against the real stack: what a job's life records, the bearer key, bounded labels,
and a scrape that reads only indexed rows."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.webapp.conftest import drain, post_job
from tests.webapp.ops.metrics_helpers import label_values, samples, value
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)

UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")


def scrape() -> dict:
    response = Client().get("/metrics")
    assert response.status_code == 200
    return samples(response.content.decode())


def test_a_job_records_duration_waits_stages_inference_and_moderation(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    before = scrape()
    job_id = post_job(api_a, source, target, mode="standard").json()["id"]
    queued = scrape()
    assert value(queued, "visage_queue_depth", queue="moderation") == 1
    assert value(queued, "visage_jobs_active", state="created") == 1
    created = {"route": "api/v1/jobs", "method": "POST", "status_class": "2xx"}
    assert value(queued, "visage_http_request_duration_seconds_count", **created) == (
        value(before, "visage_http_request_duration_seconds_count", **created) + 1
    )

    drain()
    after = scrape()
    assert api_a.get(f"/api/v1/jobs/{job_id}").json()["state"] == "succeeded"

    def grew(name, **labels) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    done = {"kind": "image", "mode": "standard", "outcome": "succeeded"}
    assert grew("visage_jobs_total", **done) == 1
    assert grew("visage_job_duration_seconds_count", **done) == 1
    assert grew("visage_job_duration_seconds_sum", **done) > 0
    assert grew("visage_job_queue_wait_seconds_count", queue="moderation") == 1
    assert grew("visage_job_queue_wait_seconds_count", queue="default") == 1
    for stage in ("screening", "download", "detect", "swap", "encode", "upload", "output_screening"):
        assert grew("visage_job_stage_seconds_count", stage=stage) >= 1, stage
    assert grew("visage_inference_seconds_count") > 0
    assert label_values(after, "visage_inference_seconds_count", "model")  # named models, e.g. dlib_hog
    assert grew("visage_moderation_decisions_total", stage="input", decision="allow", check="none") == 1
    assert grew("visage_moderation_decisions_total", stage="output") == 1
    assert grew("visage_gpu_seconds_total", queue="default") > 0
    assert value(after, "visage_queue_depth", queue="moderation") == 0
    assert value(after, "visage_jobs_active", state="created") == 0
    assert value(after, "visage_dependency_up", dependency="redis") == 1
    assert value(after, "visage_dependency_up", dependency="database") == 1
    assert value(after, "visage_dependency_up", dependency="s3") == 1


def test_a_video_job_observes_each_engine_stage_once(api_a, source_png, clip, settings):
    """The tracker's detections and the source photo's analysis count as detect/landmarks/embed;
    the segments' encoding and the join are one `encode` observation."""
    settings.VIDEO_ENABLED = True
    before = scrape()
    response = api_a.post(
        "/api/v1/jobs",
        {
            "source": SimpleUploadedFile("source.png", source_png),
            "target": SimpleUploadedFile("clip.mp4", clip),
            "consent": "true",
        },
        format="multipart",
    )
    assert response.status_code == 201, response.content
    drain()
    job = Job.objects.get(id=response.json()["id"])
    assert job.state == "succeeded", job.error_message
    after = scrape()
    for stage in ("detect", "landmarks", "embed", "swap", "paste", "encode", "upload", "output_screening"):
        grew = value(after, "visage_job_stage_seconds_count", stage=stage) - value(
            before, "visage_job_stage_seconds_count", stage=stage
        )
        assert grew == 1, (stage, grew)  # the GPU run's own: screening embeds in another step
    assert job.stage_ms["detect"] > 0 and job.stage_ms["landmarks"] > 0 and job.stage_ms["embed"] > 0


def test_a_canceled_job_is_counted_once(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    before = scrape()
    job_id = post_job(api_a, source, target, mode="fast").json()["id"]
    assert api_a.post(f"/api/v1/jobs/{job_id}/cancel").status_code == 200
    api_a.post(f"/api/v1/jobs/{job_id}/cancel")  # a second cancel moves nothing
    drain()  # the screening task finds the job canceled and does nothing
    after = scrape()
    canceled = {"kind": "image", "mode": "fast", "outcome": "canceled"}
    assert value(after, "visage_jobs_total", **canceled) - value(before, "visage_jobs_total", **canceled) == 1
    assert (
        value(after, "visage_job_duration_seconds_count", **canceled)
        - value(before, "visage_job_duration_seconds_count", **canceled)
        == 1
    )


def test_metrics_need_the_bearer_key_when_one_is_set(settings):
    settings.METRICS_KEY = "s3cret-metrics-key"
    client = Client()
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Basic s3cret-metrics-key"}).status_code == 401
    ok = client.get("/metrics", headers={"Authorization": "Bearer s3cret-metrics-key"})
    assert ok.status_code == 200
    assert b"visage_queue_depth" in ok.content


def test_labels_never_carry_ids_or_raw_paths(api_a, api_b, astronaut_pair):
    source, target, _ = astronaut_pair
    ids = [post_job(client, source, target).json()["id"] for client in (api_a, api_b)]
    for job_id in ids:
        api_a.get(f"/api/v1/jobs/{job_id}")  # 404 for b's job, 200 for a's
    Client().get("/no/such/page/" + ids[0])
    drain()
    text = Client().get("/metrics").content.decode()
    for (name, labels), _ in samples(text).items():
        for label, label_value in labels:
            assert not UUID.search(label_value), (name, label, label_value)
    routes = label_values(samples(text), "visage_http_request_duration_seconds_count", "route")
    assert "api/v1/jobs/<uuid:job_id>" in routes
    assert "unmatched" in routes


def test_a_scrape_reads_only_active_jobs_through_the_state_index(api_a, astronaut_pair):
    from billing.models import Charge

    source, target, _ = astronaut_pair
    post_job(api_a, source, target)
    with CaptureQueriesContext(connection) as queries:
        Client().get("/metrics")
    job_queries = [q["sql"] for q in queries.captured_queries if Job._meta.db_table in q["sql"]]
    assert job_queries
    for sql in job_queries:
        assert re.search(r'"state" (IN|=) ', sql), sql  # never a whole-table aggregate
        assert "SUM(" not in sql.upper()
    charge_queries = [q["sql"] for q in queries.captured_queries if Charge._meta.db_table in q["sql"]]
    assert charge_queries  # the last hour's charges: a range on an indexed column
    assert Charge._meta.get_field("created_at").db_index
    for sql in charge_queries:
        assert re.search(r'"created_at" >= ', sql), sql
