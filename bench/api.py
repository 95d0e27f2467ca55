"""API benchmark against a running stack (e.g. `make run`): submit latency and polling throughput.

    python bench/api.py --url http://127.0.0.1:8000 --username demo --password PASS [--jobs 64] [--concurrency 16]

Prints submit latency p50/p99 at the given concurrency, then GET /api/v1/jobs/{id} requests per
second at the same concurrency. Uses the astronaut pair from scikit-image.
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
    parser.add_argument("--polls", type=int, default=2000)
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

    ids = [r[2] for r in results if r[1] == 201] or [""]

    def poll(i: int) -> int:
        return session.get(f"{args.url}/api/v1/jobs/{ids[i % len(ids)]}", headers=headers, timeout=30).status_code

    wall = time.perf_counter()
    with ThreadPoolExecutor(args.concurrency) as pool:
        codes = list(pool.map(poll, range(args.polls)))
    wall = time.perf_counter() - wall
    ok = sum(1 for c in codes if c == 200)
    print(f"polling: {ok}/{len(codes)} OK, {len(codes) / wall:.0f} requests/s at concurrency {args.concurrency} "
          f"(throttled: {sum(1 for c in codes if c == 429)})")


if __name__ == "__main__":
    main()
