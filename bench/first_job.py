"""The first photo job of a fresh install: from the moment `manage.py visage_run` (what `make run`
runs) answers on /healthz to the job's `succeeded`, on this machine.

    .venv/bin/python bench/first_job.py [--repo PATH] [--runs 1]

Each run starts `visage_run` from --repo (default: this checkout) on an empty temporary data dir
(SQLite, its own embedded Redis and S3, MediaPipe's models linked from the repo's var/models as
`make run` fetches them), waits until the site answers, signs in, submits one 1280×720 photo job
through the API and waits for it, then a second one. Prints, per run: visage_run start → site
answering; site answering → first job succeeded (the figure a new user meets, signing in
included); the first job's submit → succeeded, created → succeeded and queued → started (the wait
for the GPU worker); the second job's submit → succeeded (any other job). --repo times an older
tree (e.g. `git archive <commit> | tar -x -C /tmp/before`); --logs keeps visage_run's output.

Measured 2026-12-02 on the shared 2-core machine (load average 8-29 from other sessions), three
interleaved pairs, before = 762ad36 (web, scheduler and every worker started at once; the site
answered while the moderation worker still loaded), after = the workers first, the site once they
take jobs:
  before: answering → first succeeded 25.6 / 51.6 / 12.4 s; first job 9.9 / 27.7 / 6.5 s vs the
          second 1.9 / 8.7 / 0.8 s; start → answering 94.5 / 73.4 / 41.1 s
  after:  answering → first succeeded  6.6 /  8.6 /  2.6 s; first job 2.8 / 3.5 / 1.5 s vs the
          second 1.9 / 3.3 / 0.9 s; start → answering 62.9 / 48.5 / 17.7 s
Where a start goes (after, the quietest run / the busiest): worker processes' start and imports
3.7 / 17.8 s, the GPU engine 0.7 / 3.4 s, moderation models 2.0 / 10.4 s (NudeNet 0.1 / 0.9, the
face pipeline 0.4 / 3.5, OCR 1.5 / 6.0); the GPU worker's speed measurement runs after it takes jobs.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path

import cv2
import numpy as np
import requests
from PIL import Image
from skimage import data as skdata

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from webapp.ops import embedded  # noqa: E402  (after the repo is importable)


def encode(rgb: np.ndarray, fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format=fmt, quality=90)
    return buffer.getvalue()


def pair() -> tuple[bytes, bytes]:
    astronaut = skdata.astronaut()
    face = cv2.resize(np.ascontiguousarray(astronaut[:, ::-1]), (600, 600), interpolation=cv2.INTER_AREA)
    canvas = np.full((720, 1280, 3), (90, 110, 130), np.uint8)
    canvas[60:660, 340:940] = face
    return encode(astronaut, "PNG"), encode(canvas, "JPEG")


def parse(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def submit_and_wait(url: str, headers: dict) -> dict[str, float]:
    source, target = pair()
    submitted = time.time()
    response = requests.post(
        f"{url}/api/v1/jobs",
        headers={**headers, "Idempotency-Key": str(uuid.uuid4())},
        timeout=120,
        files={"source": ("me.png", source, "image/png"), "target": ("photo.jpg", target, "image/jpeg")},
        data={"mode": "standard", "consent": "true"},
    )
    assert response.status_code in (201, 202), response.text
    job_id = response.json()["id"]
    while True:
        job = requests.get(f"{url}/api/v1/jobs/{job_id}", headers=headers, timeout=60).json()
        if job["state"] in {"succeeded", "failed", "rejected", "canceled"}:
            break
        time.sleep(0.1)
    done = time.time()
    assert job["state"] == "succeeded", job
    return {
        "submit_to_succeeded_s": done - submitted,
        "created_to_succeeded_s": parse(job["completed_at"]) - parse(job["created_at"]),
        "gpu_queue_wait_s": parse(job["started_at"]) - parse(job["queued_at"]),
    }


def one_run(repo: Path, data_dir: Path) -> dict[str, float]:
    port = embedded.free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "VISAGE_DATA_DIR": str(data_dir), "VISAGE_DEMO_PASSWORD": "bench-password"}
    for name in (
        "REDIS_URL",
        "S3_ENDPOINT",
        "DATABASE_URL",
    ):  # as on a fresh clone: visage_run starts its own
        env.pop(name, None)
    data_dir.mkdir(parents=True)
    models = repo / "var" / "models"
    if models.is_dir():  # `make run` fetches MediaPipe's models into var/models at install time
        (data_dir / "models").symlink_to(models.resolve())
    log = open(data_dir.parent / f"{data_dir.name}.log", "w")  # noqa: SIM115 - closed below
    launched = time.time()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "visage_run", "--addr", f"127.0.0.1:{port}"],
        cwd=repo,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        while True:
            if process.poll() is not None:
                raise SystemExit(f"visage_run exited; see {log.name}")
            try:
                if requests.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except (requests.ConnectionError, requests.Timeout):
                pass  # not up yet, or (on a loaded machine) not answering within 5 s yet
            time.sleep(0.1)
        answering = time.time()
        token = requests.post(
            f"{url}/api/v1/auth/token",
            timeout=30,
            json={"username": "demo", "password": "bench-password", "name": "bench"},
        )
        token.raise_for_status()
        headers = {"Authorization": f"Bearer {token.json()['token']}"}
        first = submit_and_wait(url, headers)
        done = time.time()
        second = submit_and_wait(url, headers)  # any other job, for comparison
        return {
            "start_to_answering_s": answering - launched,
            "answering_to_succeeded_s": done - answering,
            "first_submit_to_succeeded_s": first["submit_to_succeeded_s"],
            "created_to_succeeded_s": first["created_to_succeeded_s"],
            "gpu_queue_wait_s": first["gpu_queue_wait_s"],
            "second_submit_to_succeeded_s": second["submit_to_succeeded_s"],
        }
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", type=Path, default=HERE)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--logs", type=Path, default=None, help="Keep each run's visage_run log in this folder.")
    args = parser.parse_args()
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="visage-first-job-") as tmp:
            try:
                figures = one_run(args.repo.resolve(), Path(tmp) / "data")
            finally:
                if args.logs:
                    args.logs.mkdir(parents=True, exist_ok=True)
                    shutil.copy(Path(tmp) / "data.log", args.logs / f"run-{run + 1}.log")
        print(
            f"run {run + 1} ({args.repo}): visage_run start → site answering "
            f"{figures['start_to_answering_s']:.1f} s; site answering → first photo job succeeded "
            f"{figures['answering_to_succeeded_s']:.1f} s (incl. signing in; its submit → succeeded "
            f"{figures['first_submit_to_succeeded_s']:.1f} s, created → succeeded "
            f"{figures['created_to_succeeded_s']:.1f} s, waiting for the GPU worker "
            f"{figures['gpu_queue_wait_s']:.1f} s); the second job's submit → succeeded "
            f"{figures['second_submit_to_succeeded_s']:.1f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
