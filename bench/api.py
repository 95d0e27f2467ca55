"""API benchmark against a running stack (e.g. `make run`): submit latency and polling throughput.

    python bench/api.py --url http://127.0.0.1:8000 --username demo --password PASS [--jobs 64] [--concurrency 16]

Prints submit latency p50/p99 at the given concurrency, then GET /api/v1/jobs/{id} requests per
second at the same concurrency with wrk, plain (a cached body) and with If-None-Match (the 304 path),
with the read budget raised (start the stack with VISAGE_THROTTLE_READ=1000000/min), then how
many requests a client needs per job when it follows it with the long-poll (`?wait=30` with
If-None-Match) instead of a timer. Uses the astronaut pair from scikit-image.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import requests
from PIL import Image
from skimage import data as skdata
from wrk import status_rate  # bench/wrk.py, beside this script


def encode(rgb: np.ndarray, fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format=fmt, quality=90)
    return buffer.getvalue()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--username", default="demo")
    parser.add_argument("--password", required=True)
    parser.add_argument("--jobs", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--status-seconds", type=int, default=10, help="length of each status GET run (wrk)")
    parser.add_argument("--server-pid", type=int, help="the web server's main process: report its CPU per request")
    parser.add_argument("--long-poll-jobs", type=int, default=3, help="jobs followed with ?wait=30 (0: skip)")
    args = parser.parse_args()

    token = requests.post(f"{args.url}/api/v1/auth/token",
                          json={"username": args.username, "password": args.password, "name": "bench"}, timeout=10)
    token.raise_for_status()
    headers = {"Authorization": f"Bearer {token.json()['token']}"}
    astronaut = skdata.astronaut()
    source = encode(astronaut, "PNG")
    target = encode(np.ascontiguousarray(astronaut[:, ::-1]), "JPEG")

    session = requests.Session()
    session.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=args.concurrency * 2))

    def submit(i: int) -> tuple[float, int, str]:
        started = time.perf_counter()
        response = session.post(f"{args.url}/api/v1/jobs", headers={**headers, "Idempotency-Key": f"bench-{time.time()}-{i}"},
                                files={"source": ("s.png", source), "target": ("t.jpg", target)},
                                data={"mode": "fast", "consent": "true"}, timeout=60)
        return time.perf_counter() - started, response.status_code, response.json().get("id", "")

    wall = time.perf_counter()
    with ThreadPoolExecutor(args.concurrency) as pool:
        results = list(pool.map(submit, range(args.jobs)))
    wall = time.perf_counter() - wall
    latencies = [r[0] * 1000 for r in results if r[1] == 201]
    failures = [r[1] for r in results if r[1] != 201]
    print(f"submit: {len(latencies)} created, {len(failures)} failed {sorted(set(failures)) or ''}, "
          f"concurrency {args.concurrency}")
    if latencies:
        print(f"submit latency ms: p50 {statistics.median(latencies):.1f}  p99 {percentile(latencies, 99):.1f}  "
              f"max {max(latencies):.1f}  ({len(latencies) / wall:.1f} jobs/s)")

    ids = [r[2] for r in results if r[1] == 201]
    if not ids:
        return
    # One finished job (its representation no longer changes), asked for again and again.
    job_id = ids[0]
    while True:
        followed = session.get(f"{args.url}/api/v1/jobs/{job_id}?wait=30&until=final", headers=headers, timeout=60)
        if followed.json()["terminal"]:
            break
    etags = {job_id: followed.headers["ETag"]}
    for conditional in (False, True):
        label = "status GET with If-None-Match" if conditional else "status GET plain"
        rate = status_rate(f"{args.url}/api/v1/jobs/{job_id}", headers, etag=etags[job_id] if conditional else None,
                           concurrency=args.concurrency, seconds=args.status_seconds, server_pid=args.server_pid)
        print(f"{label}: {rate}")

    long_poll_requests_per_job(args, session, headers, source, target)


def long_poll_requests_per_job(args, session, headers, source: bytes, target: bytes) -> None:
    """Follow --long-poll-jobs fresh jobs to the end with `?wait=30` and If-None-Match: the requests
    each one took (submit, the long-polls, and the result download), against a 2 s timer's count."""
    counts, seconds = [], []
    for i in range(args.long_poll_jobs):
        started = time.perf_counter()
        created = session.post(f"{args.url}/api/v1/jobs", headers={**headers, "Idempotency-Key": f"bench-lp-{time.time()}-{i}"},
                               files={"source": ("s.png", source), "target": ("t.jpg", target)},
                               data={"mode": "fast", "consent": "true"}, timeout=60)
        if created.status_code != 201:
            print(f"long-poll: submit answered {created.status_code}; skipped")
            return
        job, etag, requests_made = created.json(), created.headers.get("ETag", ""), 1
        while not job["terminal"]:
            response = session.get(job["urls"]["self"] + "?wait=30", headers={**headers, "If-None-Match": etag}, timeout=60)
            requests_made += 1
            if response.status_code == 200:
                job, etag = response.json(), response.headers.get("ETag", "")
            elif response.status_code != 304:
                print(f"long-poll: answered {response.status_code}; stopped")
                return
        if job.get("result_url"):
            session.get(job["result_url"], timeout=60)
            requests_made += 1
        counts.append(requests_made)
        seconds.append(time.perf_counter() - started)
    if counts:
        timer = statistics.mean(1 + s / 2 + 1 for s in seconds)
        print(f"long-poll: {statistics.mean(counts):.1f} requests per job (max {max(counts)}; submit + long-polls "
              f"+ result) over {len(counts)} jobs of {statistics.mean(seconds):.1f} s; a 2 s timer would need "
              f"~{timer:.0f}")


if __name__ == "__main__":
    main()
