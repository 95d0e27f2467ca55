"""The whole chain with Debian's real `prometheus`: a web server and a worker from this test
(sharing one multiprocess directory, as `make run` runs them), Prometheus scraping the web's
/metrics (with the bearer key) and the worker's own port, then histogram_quantile and the queue
depth through Prometheus's HTTP API."""

from __future__ import annotations

import math
import os
import sys

import pytest
import requests
from django.conf import settings

from tests.deploy.conftest import prometheus_binary
from tests.helpers.processes import alive, start, stop
from tests.helpers.waiting import wait_until
from tests.helpers.worker_process import database_url_for_subprocess
from webapp.jobs.models import Job
from webapp.ops.embedded import free_port
from webapp.telemetry.metrics import JOB_BUCKETS_S

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "prometheus-test-key"
P99 = "histogram_quantile(0.99, sum by (le) (rate(visage_job_duration_seconds_bucket[1m])))"


class PrometheusAPI:
    def __init__(self, url: str):
        self.url = url

    def query(self, expr: str) -> list[dict]:
        response = requests.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=10)
        response.raise_for_status()
        body = response.json()
        assert body["status"] == "success", body
        return body["data"]["result"]

    def scalar(self, expr: str) -> float | None:
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else None

    def answering(self) -> bool:
        try:
            return requests.get(f"{self.url}/-/ready", timeout=5).status_code == 200
        except requests.ConnectionError:
            return False


def bucket_bounds(seconds: float) -> tuple[float, float]:
    """The (lower, upper] histogram bucket an observation of `seconds` falls in."""
    lower = 0.0
    for upper in (*JOB_BUCKETS_S, math.inf):
        if seconds <= upper:
            return lower, upper
        lower = upper
    raise AssertionError("unreachable")


def duration_s(job_id: str) -> float:
    job = Job.objects.get(id=job_id)
    return (job.completed_at - job.created_at).total_seconds()


def test_prometheus_scrapes_the_stack_and_computes_job_p99(api_a, astronaut_pair, tmp_path):
    prometheus = prometheus_binary("prometheus")
    source, target, _ = astronaut_pair
    web_port, worker_port, prom_port = free_port(), free_port(), free_port()
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="webapp.settings",
        DATABASE_URL=database_url_for_subprocess(),
        PROMETHEUS_MULTIPROC_DIR=str(metrics_dir),
        VISAGE_METRICS_KEY=KEY,
    )
    (tmp_path / "prometheus.yml").write_text(f"""
global: {{scrape_interval: 1s, evaluation_interval: 1s}}
scrape_configs:
  - job_name: visage-web
    authorization: {{credentials: {KEY}}}
    static_configs: [{{targets: ["127.0.0.1:{web_port}"]}}]
  - job_name: visage-worker
    authorization: {{credentials: {KEY}}}
    static_configs: [{{targets: ["127.0.0.1:{worker_port}"]}}]
""")
    log = (tmp_path / "stack.log").open("wb")
    manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
    processes = [
        start(
            [
                sys.executable,
                "-m",
                "granian",
                "--interface",
                "asgi",
                "webapp.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(web_port),
                "--workers",
                "2",
            ],
            env,
            log,
        ),
        start(
            [
                prometheus,
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
            ],
            env,
            log,
        ),
    ]
    api = PrometheusAPI(f"http://127.0.0.1:{prom_port}")
    web = f"http://127.0.0.1:{web_port}"
    headers = {"Authorization": api_a._credentials["HTTP_AUTHORIZATION"]}

    def submit() -> str:
        response = requests.post(
            f"{web}/api/v1/jobs",
            headers=headers,
            timeout=60,
            files={"source": ("s.png", source), "target": ("t.jpg", target)},
            data={"consent": "true"},
        )
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def succeeded(job_id: str) -> bool:
        state = requests.get(f"{web}/api/v1/jobs/{job_id}", headers=headers, timeout=30).json()["state"]
        assert state not in ("failed", "rejected", "canceled"), state
        return state == "succeeded"

    try:
        wait_until(
            lambda: alive(processes, tmp_path / "stack.log") and api.answering(),
            timeout_s=120,
            what="Prometheus to start",
        )
        wait_until(
            lambda: api.scalar('up{job="visage-web"}') == 1, timeout_s=120, what="Prometheus scraping the web"
        )
        assert requests.get(f"{web}/metrics", timeout=30).status_code == 401  # the key is required

        # A job waits on the moderation queue (no worker yet): Prometheus sees the depth.
        first = submit()
        wait_until(
            lambda: api.scalar('visage_queue_depth{job="visage-web",queue="moderation"}') == 1,
            timeout_s=60,
            what="queue depth 1 in Prometheus",
        )

        processes.append(
            start(
                [
                    *manage,
                    "visage_worker",
                    "--queues",
                    "moderation,webhooks,vip,default,batch",
                    "--metrics-port",
                    str(worker_port),
                ],
                env,
                log,
            )
        )
        wait_until(lambda: succeeded(first), timeout_s=300, what="the first job to succeed")
        wait_until(
            lambda: (api.scalar('sum(visage_jobs_total{job="visage-web"})') or 0) >= 1,
            timeout_s=60,
            what="the first job counted in Prometheus",
        )

        later = [submit(), submit()]
        wait_until(lambda: all(succeeded(job_id) for job_id in later), timeout_s=300, what="two more jobs")
        wait_until(
            lambda: (api.scalar('sum(visage_jobs_total{job="visage-web"})') or 0) >= 3,
            timeout_s=60,
            what="three jobs counted in Prometheus",
        )
        p99 = api.scalar(P99)

        depth = {
            r["metric"]["queue"]: float(r["value"][1])
            for r in api.query('visage_queue_depth{job="visage-web"}')
        }
        worker_inference = api.query('sum by (model) (visage_inference_seconds_count{job="visage-worker"})')
        web_sees_worker = api.scalar('sum(visage_job_stage_seconds_count{job="visage-web",stage="swap"})')
    finally:
        for process in reversed(processes):
            stop(process)
        log.close()

    # The p99 over the last minute lies in the bucket of the slowest job in that window: at least
    # the slower of the two later jobs (certainly in the window), at most the slowest of all three.
    assert p99 is not None and not math.isnan(p99), (tmp_path / "stack.log").read_text()[-3000:]
    slowest_later = max(duration_s(job_id) for job_id in later)
    slowest = max(duration_s(job_id) for job_id in [first, *later])
    assert bucket_bounds(slowest_later)[0] < p99 <= bucket_bounds(slowest)[1]

    assert set(depth) == {"moderation", "vip", "default", "batch", "webhooks"}
    assert depth["moderation"] == 0
    assert worker_inference and all(float(r["value"][1]) > 0 for r in worker_inference)
    assert web_sees_worker and web_sees_worker >= 3  # one multiprocess directory: the web reports the worker
