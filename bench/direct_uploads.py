"""Direct uploads: what the web process spends while 10 large uploads go straight to S3.

    python bench/direct_uploads.py [--uploads 10] [--megabytes 100] [--compare]

Self-contained: starts the embedded S3 and Redis servers, a fresh SQLite database and the web
server as `visage_run` runs it (granian, one worker), then sends N files of the given size at once
as presigned multipart uploads (8 MiB parts, PUT straight to S3) and samples the web server's
process tree (RSS, CPU seconds from /proc) every 0.1 s. Printed: the figures while the parts go up,
then while each upload is completed (S3 joins the parts; the server streams the object to a temp
file to validate it: that read is the web process's only contact with the bytes). --compare also
posts the same files the old way (one multipart POST /api/v1/quotes each, through the web process).
The files are a real short MP4 padded with an ISO-BMFF `free` box to the size asked.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
MIB = 1024 * 1024
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


def tree(pid: int) -> list[int]:
    pids, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        pids += map(int, children)
        frontier += map(int, children)
    return pids


def usage(pid: int) -> tuple[float, float]:
    """(RSS in MiB, CPU seconds) of the process and its children."""
    rss, cpu = 0, 0
    for p in tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            rss += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * PAGE
            cpu += int(fields[11]) + int(fields[12])
        except OSError:
            continue
    return rss / MIB, cpu / TICKS


class Sampler:
    def __init__(self, pid: int):
        self.pid, self.peak_mib, self._stop = pid, 0.0, threading.Event()

    def __enter__(self):
        self.rss_before, self.cpu_before = usage(self.pid)
        self.started = time.monotonic()
        self.peak_mib = self.rss_before
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(0.1):
            self.peak_mib = max(self.peak_mib, usage(self.pid)[0])

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.wall_s = time.monotonic() - self.started
        rss_after, cpu_after = usage(self.pid)
        self.cpu_s = cpu_after - self.cpu_before
        self.rss_after = rss_after

    def line(self, what: str, total_mib: float) -> str:
        return (
            f"{what:<34} wall {self.wall_s:6.1f} s  {total_mib / self.wall_s:7.1f} MiB/s  web CPU "
            f"{self.cpu_s:6.2f} s ({100 * self.cpu_s / self.wall_s:5.1f}% of a core)  web RSS "
            f"{self.rss_before:6.1f} → peak {self.peak_mib:6.1f} MiB"
        )


def padded_video(megabytes: int, tmp: Path) -> bytes:
    from skimage import data as skdata

    from swap.video import synthetic
    from swap.video.synthetic import ClipSpec

    path = tmp / "clip.mp4"
    synthetic.write_clip(
        path, ClipSpec(width=256, height=256, fps=12, seconds=2.0, audio=False), skdata.astronaut()
    )
    clip = path.read_bytes()
    padding = megabytes * MIB - len(clip)
    return clip + padding.to_bytes(4, "big") + b"free" + bytes(padding - 8)


def wait_for(url: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=2)
            return
        except requests.ConnectionError:
            time.sleep(0.3)
    raise SystemExit(f"{url} did not come up")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--uploads", type=int, default=10)
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--compare", action="store_true", help="also POST the files through the web process")
    args = parser.parse_args()

    from webapp.ops import embedded

    tmp = Path(tempfile.mkdtemp(prefix="visage-bench-uploads-"))
    env = dict(
        os.environ,
        VISAGE_DATA_DIR=str(tmp),
        S3_ACCESS_KEY="bench",
        S3_SECRET_KEY="bench-secret-key",
        VISAGE_VIDEO_MAX_BYTES=str((args.megabytes + 1) * MIB),
        VISAGE_MAX_UPLOAD_BYTES=str((args.megabytes + 1) * MIB),
        VISAGE_THROTTLE_CREATE="100000/min",
        DEBUG="0",
        DJANGO_SETTINGS_MODULE="webapp.settings",
        PYTHONPATH=str(ROOT),
    )
    s3 = embedded.start_s3(tmp / "s3", env["S3_ACCESS_KEY"], env["S3_SECRET_KEY"])
    redis = embedded.start_redis(tmp / "redis", persist=False)
    env.update(S3_ENDPOINT=s3.url, REDIS_URL=redis.url)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True)
    subprocess.run(
        [
            *manage,
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model; "
            "get_user_model().objects.create_user('bench', password='bench-pass-123')",
        ],
        env=env,
        check=True,
    )
    port = embedded.free_port()
    web = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "granian",
            "--interface",
            "wsgi",
            "webapp.wsgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
            "--blocking-threads",
            "32",
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{base}/healthz")
        token = requests.post(
            f"{base}/api/v1/auth/token", json={"username": "bench", "password": "bench-pass-123"}, timeout=30
        ).json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        video = padded_video(args.megabytes, tmp)
        digest = hashlib.sha256(video).hexdigest()
        total_mib = args.uploads * len(video) / MIB
        time.sleep(1)
        idle_rss, _ = usage(web.pid)
        print(f"{args.uploads} uploads of {len(video) / MIB:.0f} MiB; web server idle RSS {idle_rss:.1f} MiB")

        uploads = [
            requests.post(
                f"{base}/api/v1/uploads",
                headers=headers,
                timeout=30,
                json={
                    "kind": "video",
                    "size_bytes": len(video),
                    "content_type": "video/mp4",
                    "sha256": digest,
                },
            ).json()
            for _ in range(args.uploads)
        ]
        jobs = [(u, p) for u in uploads for p in u["parts"]]

        def put(job):
            upload, part = job
            start = (part["part_number"] - 1) * upload["part_size_bytes"]
            response = requests.put(part["url"], data=video[start : start + part["size_bytes"]], timeout=300)
            response.raise_for_status()

        with Sampler(web.pid) as parts_phase, ThreadPoolExecutor(args.uploads) as pool:
            list(pool.map(put, jobs))
        print(parts_phase.line("parts PUT straight to S3", total_mib))

        def complete(upload):
            response = requests.post(upload["urls"]["complete"], headers=headers, timeout=600)
            assert response.status_code == 200, response.text

        with Sampler(web.pid) as complete_phase, ThreadPoolExecutor(args.uploads) as pool:
            list(pool.map(complete, uploads))
        print(complete_phase.line("complete (S3 joins; server validates)", total_mib))

        if args.compare:

            def post(_):
                response = requests.post(
                    f"{base}/api/v1/quotes",
                    headers=headers,
                    timeout=600,
                    files={"target": ("clip.mp4", video, "video/mp4")},
                    data={"mode": "standard", "resolution": "720p"},
                )
                assert response.status_code == 200, response.text

            with Sampler(web.pid) as post_phase, ThreadPoolExecutor(args.uploads) as pool:
                list(pool.map(post, range(args.uploads)))
            print(post_phase.line("the same files POSTed through the web", total_mib))
    finally:
        web.terminate()
        web.wait(10)
        s3.stop()
        redis.stop()


if __name__ == "__main__":
    main()
