"""The images really run: build `web` and `worker` with Podman, start them with host networking
against PostgreSQL, Redis and an S3 server, migrate inside the container, submit a real job through
the API and fetch the swapped result.

Marked `container` (excluded from `make test`; `.ci/run` runs `pytest -m container`). Skips with
the reason when Podman or PostgreSQL is missing, and fails instead under CI=true.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
import uuid
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
import requests
from PIL import Image

from tests.helpers.images import encode
from tests.helpers.podman import POLLS, REPO, free_port, make_images, podman, unavailable, wait_until_healthy
from webapp.media import provenance

# A cold build of the two images (wheelhouse, base, worker with torch) takes 15-20 min on 2 shared
# cores: far over the suite's 600 s per-test timeout.
pytestmark = [pytest.mark.container, pytest.mark.timeout(3600)]

POSTGRES_ADMIN_URL = os.environ.get("VISAGE_CONTAINER_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
DATABASE = "visage_container"
METRICS_KEY = f"metrics-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def images() -> dict[str, str]:
    return make_images("web", "worker")


@pytest.fixture(scope="module")
def database_url() -> str:
    import psycopg

    try:
        admin = psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        unavailable(f"PostgreSQL is not reachable at {POSTGRES_ADMIN_URL}: {exc}")
    with admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DATABASE}")
    yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{DATABASE}"
    with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


@pytest.fixture(scope="module")
def c2pa_chain(tmp_path_factory) -> Path:
    """An installation's C2PA chain (manage.py visage_provenance --generate-chain), mounted read-only
    at /run/secrets/visage as deploy/k8s mounts the Secret. Readable by the image's user 10001."""
    directory = tmp_path_factory.mktemp("c2pa") / "chain"
    subprocess.run(
        [sys.executable, "manage.py", "visage_provenance", "--generate-chain", str(directory)],
        cwd=REPO, check=True, capture_output=True,
    )
    directory.chmod(0o755)
    for path in directory.iterdir():
        path.chmod(0o644)
    return directory


@pytest.fixture(scope="module")
def environment(database_url, c2pa_chain) -> dict[str, str]:
    """Production mode, every setting from the environment, as in deploy/k8s."""
    return {
        "VISAGE_PRODUCTION": "1",
        "SECRET_KEY": f"container-test-{uuid.uuid4().hex}",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": database_url,
        # The Redis and S3 servers this test session started (tests/settings.py), on 127.0.0.1.
        "REDIS_URL": os.environ["REDIS_URL"],
        "S3_ENDPOINT": os.environ["S3_ENDPOINT"],
        "S3_ACCESS_KEY": os.environ["S3_ACCESS_KEY"],
        "S3_SECRET_KEY": os.environ["S3_SECRET_KEY"],
        "S3_UPLOADS_BUCKET": f"ct-uploads-{uuid.uuid4().hex[:8]}",
        "S3_RESULTS_BUCKET": f"ct-results-{uuid.uuid4().hex[:8]}",
        "VISAGE_WEBHOOK_SECRET": "whsec_Y29udGFpbmVyLXRlc3Qtc2VjcmV0",
        "VISAGE_C2PA_CERT_FILE": "/run/secrets/visage/chain.pem",
        "VISAGE_C2PA_KEY_FILE": "/run/secrets/visage/signer.key",
        "VISAGE_METRICS_KEY": METRICS_KEY,
        "VISAGE_WORKER_METRICS_PORT": str(free_port()),
        "C2PA_HOST_DIR": str(c2pa_chain),  # not passed to the containers: run_args mounts it
    }


def run_args(environment: dict[str, str]) -> list[str]:
    """Host networking; a read-only root file system with /tmp in memory, as the k8s pods run."""
    args = ["--network", "host", "--read-only", "--tmpfs", "/tmp",
            "-v", f"{environment['C2PA_HOST_DIR']}:/run/secrets/visage:ro"]
    for name, value in environment.items():
        if name != "C2PA_HOST_DIR":
            args += ["-e", f"{name}={value}"]
    return args


@pytest.fixture(scope="module")
def stack(images, environment):
    names = []
    try:
        migrate = podman("run", "--rm", *run_args(environment), images["web"], "migrate", check=False)
        assert migrate.returncode == 0 and "Applying" in migrate.stdout, migrate.stdout + migrate.stderr

        port = free_port()
        web = f"visage-ct-web-{uuid.uuid4().hex[:6]}"
        podman("run", "-d", "--name", web, *run_args({**environment, "PORT": str(port)}), images["web"])
        names.append(web)
        worker = f"visage-ct-worker-{uuid.uuid4().hex[:6]}"
        # One CPU worker for every queue: the GPU image runs only on a GPU (bench/gpu_check.py).
        podman("run", "-d", "--name", worker, *run_args(environment), images["worker"],
               "worker", "--queues", "moderation,vip,default,batch,webhooks")
        names.append(worker)

        base_url = f"http://127.0.0.1:{port}"
        wait_until_healthy(base_url, web)
        yield {"url": base_url, "web": web, "worker": worker, "environment": environment}
    finally:
        for name in names:
            logs = podman("logs", "--tail", "40", name, check=False)
            print(f"--- {name} ---\n{logs.stdout}{logs.stderr}")
            podman("rm", "-f", "-t", "5", name, check=False)


@pytest.fixture(scope="module")
def api_token(stack, images) -> str:
    """An operator's step: a user with credits, made with manage.py inside the web image."""
    password = uuid.uuid4().hex
    script = (
        "from decimal import Decimal; from django.contrib.auth import get_user_model; "
        "from billing import services; "
        f"u = get_user_model().objects.create_user(username='ct', password='{password}'); "
        "services.account_top_up(user=u, amount=Decimal('1000'), actor=None, reason='container test')"
    )
    podman("run", "--rm", *run_args(stack["environment"]), images["web"], "python", "manage.py", "shell", "-c", script)
    response = requests.post(f"{stack['url']}/api/v1/auth/token", json={"username": "ct", "password": password}, timeout=30)
    assert response.status_code in (200, 201), response.text
    return response.json()["token"]


def test_web_image_carries_no_torch(images):
    found = podman("run", "--rm", "--network", "none", images["web"], "python", "-c",
                   "import importlib.util as u; print(u.find_spec('torch') is None, u.find_spec('open_clip') is None)")
    assert found.stdout.split() == ["True", "True"]


def test_images_run_as_a_non_root_user(images):
    for image in images.values():
        assert podman("run", "--rm", "--network", "none", image, "id", "-u").stdout.strip() == "10001"


def test_a_job_submitted_to_the_containers_is_swapped(stack, api_token, c2pa_chain):
    import cv2
    from skimage import data as skdata

    source_rgb = skdata.astronaut()
    target_rgb = cv2.resize(cv2.flip(source_rgb, 1), (460, 430), interpolation=cv2.INTER_AREA)
    headers = {"Authorization": f"Bearer {api_token}", "Idempotency-Key": str(uuid.uuid4())}
    submitted = time.monotonic()
    response = requests.post(
        f"{stack['url']}/api/v1/jobs", headers=headers, timeout=60,
        files={"source": ("me.png", encode(source_rgb, "PNG"), "image/png"),
               "target": ("photo.jpg", encode(target_rgb, "JPEG"), "image/jpeg")},
        data={"mode": "standard", "resolution": "original", "consent": "true"},
    )
    assert response.status_code in (201, 202), response.text
    job_id = response.json()["id"]

    for _ in range(POLLS):
        job = requests.get(f"{stack['url']}/api/v1/jobs/{job_id}", headers={"Authorization": headers["Authorization"]},
                           timeout=30).json()
        if job["state"] in ("succeeded", "failed", "rejected", "canceled"):
            break
        time.sleep(1)
    print(f"job {job_id}: {job['state']} after {time.monotonic() - submitted:.1f} s; metrics {job.get('metrics')}")
    assert job["state"] == "succeeded", job

    result = requests.get(job["result"]["url"], timeout=60)
    assert result.status_code == 200
    # Signed inside the worker container with the mounted chain: valid against its root.
    report = provenance.read(result.content, media_type=result.headers["Content-Type"].split(";")[0],
                             trust_anchors_pem=(c2pa_chain / "root.pem").read_bytes())
    assert report.manifest_present and report.validation_state in ("Valid", "Trusted"), report.failures
    swapped = np.asarray(Image.open(io.BytesIO(result.content)).convert("RGB"))
    assert swapped.shape == target_rgb.shape
    changed = np.abs(swapped.astype(int) - target_rgb.astype(int)).max(axis=2) > 30
    assert changed.mean() > 0.005, "the result is the target unchanged"
    assert float(job["cost"]["charge"]) > 0

    me = requests.get(f"{stack['url']}/api/v1/me", headers={"Authorization": headers["Authorization"]}, timeout=30).json()
    print(f"balance after one job: {me}")
    assert Decimal(me["held"]) == 0 and Decimal(me["balance"]) == Decimal("1000") - Decimal(job["cost"]["charge"])


def test_web_metrics_merge_its_processes_and_need_the_key(stack):
    """The web server's worker processes share one multiprocess directory (the entrypoint makes it in /tmp)."""
    url = f"{stack['url']}/metrics"
    assert requests.get(url, timeout=30).status_code == 401
    for _ in range(8):  # requests land on both web worker processes
        requests.get(f"{stack['url']}/livez", timeout=30)
    scraped = requests.get(url, headers={"Authorization": f"Bearer {METRICS_KEY}"}, timeout=30)
    assert scraped.status_code == 200
    assert "visage_http_request_duration_seconds_bucket" in scraped.text


def test_worker_probe_metrics_and_a_clean_drain(stack, images):
    """A worker of its own (the job test keeps the shared one): its probe reads its heartbeat, it
    serves its own /metrics on VISAGE_WORKER_METRICS_PORT with the key, and `podman stop`
    (SIGTERM) ends it with status 0."""
    port = free_port()
    name = f"visage-ct-drain-{uuid.uuid4().hex[:6]}"
    podman("run", "-d", "--name", name, *run_args({**stack["environment"], "VISAGE_WORKER_METRICS_PORT": str(port)}),
           images["worker"], "worker", "--queues", "webhooks")
    try:
        for _ in range(120):
            probe = podman("exec", name, "python", "manage.py", "visage_worker_probe", check=False)
            if probe.returncode == 0:
                break
            time.sleep(1)
        assert probe.returncode == 0, probe.stdout + probe.stderr
        assert "heartbeating" in probe.stdout
        url = f"http://127.0.0.1:{port}/metrics"
        assert requests.get(url, timeout=30).status_code == 401
        scraped = requests.get(url, headers={"Authorization": f"Bearer {METRICS_KEY}"}, timeout=30)
        assert scraped.status_code == 200 and "visage_" in scraped.text
        podman("stop", "-t", "300", name)
        exit_code = podman("inspect", "-f", "{{.State.ExitCode}}", name).stdout.strip()
        assert exit_code == "0", podman("logs", "--tail", "40", name, check=False).stderr
    finally:
        podman("rm", "-f", "-t", "5", name, check=False)
