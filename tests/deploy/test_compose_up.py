"""deploy/compose.yaml really runs: podman-compose starts PostgreSQL, Redis, MinIO, migrate, web, a
CPU worker (taking the GPU queues, as documented for a machine without a GPU), the scheduler and
Prometheus from the compose file as shipped; a job submitted through the published web port is
swapped, its result is fetched from the published S3 port, and Prometheus scrapes the web.

Only the third-party images are replaced, through the compose file's own variables, by stand-ins
built here from Debian's packages (tests/deploy/standins: no registry can be reached); each honours
the compose file's commands, environment, volumes and health checks. Grafana has no Debian
package and is not started. The visage.env and secrets are made as deploy/README.md says.

Marked `container` (`.ci/run` runs `pytest -m container`). Skips with the reason when Podman or
podman-compose cannot be had, and fails instead under CI=true.
"""

from __future__ import annotations

import io
import os
import secrets
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
import requests
from PIL import Image

from tests.helpers.images import encode
from tests.helpers.operator_env import visage_env
from tests.helpers.podman import (
    POLLS,
    REPO,
    TAG,
    free_port,
    make_images,
    podman,
    unavailable,
    wait_until_healthy,
)
from webapp.media import provenance
from webapp.ops.embedded import weed_binary

pytestmark = [pytest.mark.container, pytest.mark.timeout(3600)]

DEPLOY = REPO / "deploy"
STANDINS = Path(__file__).resolve().parent / "standins"
STANDIN_SERVICES = ("postgres", "redis", "minio", "prometheus")
PODMAN_COMPOSE = "podman-compose==1.6.0"
PODMAN_COMPOSE_DIR = REPO / "build" / "podman-compose"  # beside the venv, as .ci/run puts schemathesis
CPU_QUEUES = "moderation,webhooks,vip,default,batch"


@pytest.fixture(scope="module")
def images() -> dict[str, str]:
    """Visage's web and worker images (make images) and the stand-ins, as the compose variables
    that select them."""
    make_images("web", "worker")
    started = time.monotonic()
    context = Path(os.environ.get("TMPDIR", "/tmp")) / f"visage-standins-{uuid.uuid4().hex[:8]}"
    shutil.copytree(STANDINS, context)
    shutil.copy(weed_binary(), context / "weed")
    variables = {"VISAGE_IMAGE_TAG": TAG}
    try:
        for service in STANDIN_SERVICES:
            image = f"localhost/visage-standin-{service}:{TAG}"
            podman("build", "--network", "host", "--target", service, "-t", image,
                   "-f", str(context / "Containerfile"), str(context), capture=False)
            variables[f"VISAGE_{service.upper()}_IMAGE"] = image
    finally:
        shutil.rmtree(context)
    print(f"stand-in images: {time.monotonic() - started:.0f} s")
    return variables


@pytest.fixture(scope="module")
def podman_compose() -> list[str]:
    """podman-compose, installed beside the venv (not a project dependency)."""
    if not (PODMAN_COMPOSE_DIR / "podman_compose.py").exists():
        installed = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(PODMAN_COMPOSE_DIR), PODMAN_COMPOSE],
            capture_output=True, text=True,
        )
        if installed.returncode != 0:
            unavailable(f"could not install {PODMAN_COMPOSE}: {installed.stderr[-500:]}")
    return [sys.executable, "-m", "podman_compose"]


def make_secrets(directory: Path) -> None:
    """deploy/README.md's steps: the C2PA chain, the metrics key, and their owners (the Visage
    images run as 10001, Prometheus as nobody, 65534)."""
    subprocess.run([sys.executable, "manage.py", "visage_provenance", "--generate-chain", str(directory)],
                   cwd=REPO, check=True, capture_output=True)
    (directory / "metrics-key").write_text(secrets.token_hex(32) + "\n")
    shutil.copy(DEPLOY / "alertmanager" / "alertmanager.yml", directory / "alertmanager.yml")
    for name in ("chain.pem", "signer.key"):
        os.chown(directory / name, 10001, 0)
        (directory / name).chmod(0o400)
    os.chown(directory / "metrics-key", 10001, 65534)
    (directory / "metrics-key").chmod(0o440)


def container(project: str, service: str) -> str:
    names = podman("ps", "-a", "--filter", f"label=io.podman.compose.project={project}",
                   "--filter", f"label=com.docker.compose.service={service}", "--format", "{{.Names}}").stdout.split()
    assert len(names) == 1, (service, names)
    return names[0]


def wait_healthy(names: list[str]) -> None:
    """Runs the compose health checks (pg_isready, redis-cli ping, mc ready local) until they pass.
    Podman runs them on systemd timers; this machine has no systemd, so the test runs them."""
    waiting = list(names)
    for _ in range(120):
        waiting = [name for name in waiting if podman("healthcheck", "run", name, check=False).returncode != 0]
        if not waiting:
            return
        time.sleep(1)
    pytest.fail(f"never healthy: {waiting}: {podman('logs', '--tail', '30', waiting[0], check=False).stderr}")


@pytest.fixture(scope="module")
def stack(images, podman_compose, tmp_path_factory):
    deploy = tmp_path_factory.mktemp("compose") / "deploy"
    shutil.copytree(DEPLOY, deploy, ignore=shutil.ignore_patterns("secrets", "visage.env"))
    ports = {name: free_port() for name in ("VISAGE_WEB_PORT", "VISAGE_S3_PORT", "VISAGE_MINIO_CONSOLE_PORT",
                                             "VISAGE_PROMETHEUS_PORT", "VISAGE_GRAFANA_PORT")}
    (deploy / "visage.env").write_text(visage_env((deploy / "visage.env.example").read_text(), ports["VISAGE_S3_PORT"]))
    (deploy / "visage.env").chmod(0o600)
    make_secrets(deploy / "secrets")

    project = f"visage-ct-{uuid.uuid4().hex[:6]}"
    environment = {**os.environ, **images, **{k: str(v) for k, v in ports.items()},
                   "VISAGE_CPU_WORKER_QUEUES": CPU_QUEUES, "PYTHONPATH": str(PODMAN_COMPOSE_DIR)}

    def compose(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run([*podman_compose, "-p", project, "-f", "compose.yaml", *args],
                              cwd=deploy, env=environment, capture_output=True, text=True)
        assert done.returncode == 0, f"podman-compose {' '.join(args)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    started = time.monotonic()
    try:
        # In stages: podman before 4.6 (Debian 12 has 4.3) makes podman-compose ignore
        # `condition: service_healthy`, and podman before 5.6 cannot start a service whose one-shot
        # dependency (migrate) has exited (containers/podman#26193); deploy/README.md says so.
        compose("up", "-d", "postgres", "redis", "minio", "prometheus")
        wait_healthy([container(project, service) for service in ("postgres", "redis", "minio")])
        compose("up", "-d", "migrate")
        migrate = container(project, "migrate")
        exit_code = podman("wait", migrate).stdout.strip()
        assert exit_code == "0", podman("logs", "--tail", "40", migrate, check=False).stderr
        compose("up", "-d", "--no-deps", "web", "worker", "scheduler")
        base_url = f"http://127.0.0.1:{ports['VISAGE_WEB_PORT']}"
        wait_until_healthy(base_url, container(project, "web"))
        print(f"compose stack up (web /healthz answers): {time.monotonic() - started:.0f} s")
        yield {"url": base_url, "project": project, "deploy": deploy, "ports": ports,
               "prometheus": f"http://127.0.0.1:{ports['VISAGE_PROMETHEUS_PORT']}"}
    finally:
        for line in podman("ps", "-a", "--filter", f"label=io.podman.compose.project={project}",
                           "--format", "{{.Names}}", check=False).stdout.split():
            logs = podman("logs", "--tail", "25", line, check=False)
            print(f"--- {line} ---\n{logs.stdout}{logs.stderr}")
        down = subprocess.run([*podman_compose, "-p", project, "-f", "compose.yaml", "down", "-v", "-t", "10"],
                              cwd=deploy, env=environment, capture_output=True, text=True)
        print(f"podman-compose down -v: {down.returncode}")


@pytest.fixture(scope="module")
def api_token(stack) -> str:
    """An operator's step: a user with credits, made with manage.py inside the running web container."""
    password = uuid.uuid4().hex
    script = (
        "from decimal import Decimal; from django.contrib.auth import get_user_model; "
        "from billing import services; "
        f"u = get_user_model().objects.create_user(username='compose', password='{password}'); "
        "services.account_top_up(user=u, amount=Decimal('1000'), actor=None, reason='compose test')"
    )
    podman("exec", container(stack["project"], "web"), "python", "manage.py", "shell", "-c", script)
    response = requests.post(f"{stack['url']}/api/v1/auth/token", json={"username": "compose", "password": password},
                             timeout=30)
    assert response.status_code in (200, 201), response.text
    return response.json()["token"]


def test_a_job_submitted_to_the_compose_stack_is_swapped_and_fetched_from_the_published_s3(stack, api_token):
    import cv2
    from skimage import data as skdata

    source_rgb = skdata.astronaut()
    target_rgb = cv2.resize(cv2.flip(source_rgb, 1), (460, 430), interpolation=cv2.INTER_AREA)
    authorization = {"Authorization": f"Bearer {api_token}"}
    submitted = time.monotonic()
    response = requests.post(
        f"{stack['url']}/api/v1/jobs", headers={**authorization, "Idempotency-Key": str(uuid.uuid4())}, timeout=60,
        files={"source": ("me.png", encode(source_rgb, "PNG"), "image/png"),
               "target": ("photo.jpg", encode(target_rgb, "JPEG"), "image/jpeg")},
        data={"mode": "standard", "resolution": "original", "consent": "true"},
    )
    assert response.status_code in (201, 202), response.text
    job_id = response.json()["id"]
    for _ in range(POLLS):
        job = requests.get(f"{stack['url']}/api/v1/jobs/{job_id}", headers=authorization, timeout=30).json()
        if job["state"] in ("succeeded", "failed", "rejected", "canceled"):
            break
        time.sleep(1)
    print(f"job {job_id}: {job['state']} after {time.monotonic() - submitted:.1f} s")
    assert job["state"] == "succeeded", job

    # The URL names MinIO's published port (S3_PUBLIC_URL), not minio:9000 of the compose network.
    assert urlsplit(job["result"]["url"]).netloc == f"127.0.0.1:{stack['ports']['VISAGE_S3_PORT']}"
    result = requests.get(job["result"]["url"], timeout=60)
    assert result.status_code == 200, result.text[:500]
    report = provenance.read(result.content, media_type=result.headers["Content-Type"].split(";")[0],
                             trust_anchors_pem=(stack["deploy"] / "secrets" / "root.pem").read_bytes())
    assert report.manifest_present and report.validation_state in ("Valid", "Trusted"), report.failures
    swapped = np.asarray(Image.open(io.BytesIO(result.content)).convert("RGB"))
    assert swapped.shape == target_rgb.shape
    changed = np.abs(swapped.astype(int) - target_rgb.astype(int)).max(axis=2) > 30
    assert changed.mean() > 0.005, "the result is the target unchanged"


def test_prometheus_scrapes_the_web_and_the_started_worker_with_the_key(stack):
    """Every target Prometheus has is up: the web (web:8000, a Host the web accepts) and the one
    worker (found by DNS: the gpu-worker, not started, is no target). Polled: Prometheus scrapes
    every 15 s, and the worker serves /metrics once its models are warm."""
    def query(expression: str) -> list[dict]:
        answer = requests.get(f"{stack['prometheus']}/api/v1/query", params={"query": expression}, timeout=30).json()
        assert answer["status"] == "success", answer
        return answer["data"]["result"]

    for _ in range(POLLS):
        targets = {(s["metric"]["job"], s["metric"]["instance"]): s["value"][1] for s in query('up{job=~"visage.*"}')}
        jobs = sorted(job for job, _ in targets)
        if jobs == ["visage-web", "visage-workers"] and set(targets.values()) == {"1"}:
            break
        time.sleep(1)
    active = requests.get(f"{stack['prometheus']}/api/v1/targets", timeout=30).json()["data"]["activeTargets"]
    assert jobs == ["visage-web", "visage-workers"] and set(targets.values()) == {"1"}, [
        (t["labels"]["job"], t["labels"]["instance"], t["health"], t["lastError"]) for t in active]
    assert targets[("visage-web", "web:8000")] == "1"
    assert query('visage_http_request_duration_seconds_count{job="visage-web"}'), "the web's own metrics"
