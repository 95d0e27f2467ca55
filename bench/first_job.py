"""The first photo job of a fresh install: from the moment `manage.py visage_run` (what `make run`
runs) answers on /healthz to the job's `succeeded`, on this machine.

    .venv/bin/python bench/first_job.py [--repo PATH] [--runs 1]

Each run starts `visage_run` from --repo (default: this checkout) on an empty temporary data dir
(SQLite, its own embedded Redis and S3, as `make run` on a fresh clone), waits until the site
answers, submits one 1280×720 photo job through the API and waits for it. Prints, per run: site
answering → succeeded (the figure a new user meets), and the job's own created → succeeded and
queued → started (the wait for the GPU worker) from the server's timestamps. --repo lets the same
script time an older tree (e.g. `git archive <commit> | tar -x -C /tmp/before`).

Measured 2026-12-02 on the shared 2-core machine (five other sessions busy), one run each:
  before (060da2f: the GPU worker measured its speed before its first job)
      site answering → succeeded 176.7 s (created → succeeded 165.0 s, GPU-queue wait 137.8 s)
  after (the measurement runs while idle, one step at a time)
      site answering → succeeded  44.3 s (created → succeeded  32.1 s, GPU-queue wait   2.1 s)
What is left after the change is the workers' model loading after the site answers (the
moderation worker took 29.7 s to load on this loaded machine), not the measurement.
"""

from __future__ import annotations

import argparse
import io
import os
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


def one_run(repo: Path, data_dir: Path, run_args: tuple[str, ...] = ()) -> dict[str, float]:
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
    log = open(data_dir.parent / f"{data_dir.name}.log", "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, "manage.py", "visage_run", "--addr", f"127.0.0.1:{port}", *run_args],
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
            except (requests.ConnectionError, requests.Timeout):  # not up yet, or a loaded machine
                pass
            time.sleep(0.1)
        answering = time.time()
        token = requests.post(
            f"{url}/api/v1/auth/token",
            timeout=30,
            json={"username": "demo", "password": "bench-password", "name": "bench"},
        )
        token.raise_for_status()
        headers = {"Authorization": f"Bearer {token.json()['token']}"}
        source, target = pair()
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
            "answering_to_succeeded_s": done - answering,
            "created_to_succeeded_s": parse(job["completed_at"]) - parse(job["created_at"]),
            "gpu_queue_wait_s": parse(job["started_at"]) - parse(job["queued_at"]),
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
    parser.add_argument("--triton-venv", type=Path, default=None,
                        help="as `make run INFERENCE=triton`: visage_run --inference triton with this venv")
    args = parser.parse_args()
    run_args = ("--inference", "triton", "--triton-venv", str(args.triton_venv.resolve())) if args.triton_venv else ()
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="visage-first-job-") as tmp:
            figures = one_run(args.repo.resolve(), Path(tmp) / "data", run_args)
        print(
            f"run {run + 1} ({args.repo}): site answering → first photo job succeeded "
            f"{figures['answering_to_succeeded_s']:.1f} s (job created → succeeded "
            f"{figures['created_to_succeeded_s']:.1f} s, waiting for the GPU worker "
            f"{figures['gpu_queue_wait_s']:.1f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
