"""Structured logs: one JSON object per line, and the API's request id following the job through
its RQ tasks into the workers' log lines."""

from __future__ import annotations

import io
import json
import logging

import django_rq
import pytest

from tests.webapp.conftest import drain, post_job
from webapp.telemetry import context
from webapp.telemetry.logs import JsonFormatter

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def json_lines():
    """Every log line the code under test writes, as parsed JSON (the production formatter)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.INFO)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def test_a_line_is_json_with_the_bound_context_and_extra_fields():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("visage.test.logs")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with context.bound(request_id="r-1", job_id="j-1", queue="default", attempt=2, stage=None):
            logger.warning("swap took %s ms", 12, extra={"duration_s": 0.012})
        logger.info("outside")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["event"] == "swap took 12 ms" and first["level"] == "warning"
    assert (first["request_id"], first["job_id"], first["queue"], first["attempt"]) == (
        "r-1",
        "j-1",
        "default",
        2,
    )
    assert first["duration_s"] == 0.012 and "stage" not in first
    assert "request_id" not in second  # the context ends with its block


def test_the_request_id_follows_the_job_into_its_tasks_and_worker_logs(api_a, astronaut_pair, json_lines):
    source, target, _ = astronaut_pair
    response = post_job(api_a, source, target, headers={"X-Request-Id": "req-observe-42"})
    assert response["X-Request-Id"] == "req-observe-42"
    job_id = response.json()["id"]
    screening = django_rq.get_queue("moderation").fetch_job(f"screen-{job_id}")
    assert screening.meta["request_id"] == "req-observe-42"

    drain()

    about_job = [line for line in json_lines() if line.get("job_id") == job_id]
    assert {line["queue"] for line in about_job} >= {"moderation", "default"}
    assert all(line["request_id"] == "req-observe-42" for line in about_job)
    stages = {line["stage"]: line for line in about_job if "stage" in line and "duration_s" in line}
    assert {"screening", "download", "encode", "upload", "output_screening"} <= set(stages)
    assert stages["screening"]["queue"] == "moderation" and "attempt" not in stages["screening"]
    assert all(stages[s]["queue"] == "default" and stages[s]["attempt"] == 1 for s in ("download", "upload"))
    assert all(line["duration_s"] >= 0 for line in stages.values())
    ended = next(line for line in about_job if line.get("outcome") == "succeeded")
    assert ended["duration_s"] > 0 and ended["kind"] == "image" and ended["attempt"] == 1
