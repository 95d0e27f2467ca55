"""The job path end to end, side by side in one run: the naive baseline against the
README stack, on this machine.

    .venv/bin/python bench/jobpath.py [--jobs 50] [--naive 10] [--concurrency 8] [--moderation-workers N]
                                      [--video-seconds 30] [--target-size 4032x3024] [--source-size 3024x3024]

1. naive: one `python -m swap run` process per job (models load every time, no moderation, no
   storage): jobs/min.
2. the README stack (`manage.py visage_run` on its embedded defaults: SQLite, an embedded Redis
   and S3 server, in a temporary data dir): single-job latency (one job at a time), then a burst of
   --jobs submitted at --concurrency: jobs/min and p50/p99 submit → succeeded, all from the
   server's own timestamps (created_at → completed_at), never the client's poll interval; where
   the time goes (created → queued = screening incl. its queue wait, queued → started = GPU queue
   wait, started → completed = the GPU step, and the GPU step's stage_ms).
3. status: GET /api/v1/jobs/{id} requests/s at concurrency 16, plain and with If-None-Match (the
   304 path, when the server sends an ETag); requests a client needs per job with ?wait= long-poll.
4. with --video-seconds: one 1280x720 30 fps clip of that length (bench/video.py's, one moving face)
   through the API: submit → succeeded and frames/s over it (its segments on the GPU-step workers).

Every target is a different 1280×720 JPEG (a real photo, shifted; `--target-size` for a phone's 12 MP):
no job reuses another's upload. The source is a 512x512 PNG (`--source-size`: a JPEG of a selfie's size).

Each phase also prints the CPU seconds per job of every process of the stack (psutil: user +
system, waited-for children included), by role: where the CPU goes, not just how long jobs wait.

Measured 2026-12-01 on the 2-core CI machine, one run each, alternating, quiet machine (before =
34c20aa, after = largest-face analysis for sources and one-face targets + dlib's ResNet on
onnxruntime):
                                      before            after
  naive CLI                           28.6 jobs/min     32.6 jobs/min (the naive CLI is noisy: 28-45)
  single job p50 submit → succeeded   0.71 s            0.28 s   (screening 0.52 → 0.14 s)
  single job CPU                      882 ms            426 ms   (moderation 500 → 144 ms)
  burst of 50                         115.8 jobs/min    245.0 jobs/min (7.5× naive)
  burst p50 / p99                     12.9 / 23.9 s     6.4 / 10.7 s
  burst CPU per job                   796 ms            453 ms   (GPU-step worker 148, moderation 141,
                                                                   web 87, S3 54, redis 10)
  client requests per job             2.00              2.00
  status GET c=16 plain / 304         1,101 / 1,587     987 / 1,206 req/s (wrk)
A second pair of runs: before 116.2, after 217.2 jobs/min. Two moderation workers instead of one
(--moderation-workers 2): 236.5 jobs/min, the GPU-step worker then being the queue (GPU queue
p50 3.9 s): one per two cores stays the default. With one blocked term (--blocked-term forbidden:
OCR then reads every target): 187.0 jobs/min with OCR on all cores (its sessions spin: 297 ms
moderation CPU a job), 224.9 jobs/min (single job 0.30 s, 186 ms moderation CPU) with OCR on one thread.

Measured 2026-12-02 on the same 2-core CI machine on a slow day (CPython ~4× slower than a laptop:
absolute figures are not comparable with the ones above), --single 5 --jobs 40, MediaPipe engine,
after the GPU worker's own speed measurement ended, alternating (before = d71788c with this script):
                                      before (2 runs)       after (2 runs)
  single job p50 submit → succeeded   0.86 / 0.60 s         0.48 / 0.54 s
  single job CPU                      1290 / 934 ms         726 / 840 ms
  burst jobs/min                      90.6 / 111.7          130.2 / 125.4
  burst p50 / p99                     14.6/22.9, 11.4/18.3  10.0/15.4, 10.2/16.4 s
  burst CPU per job                   1222 / 985 ms         807 / 852 ms (GPU-step worker 337-356,
                                                            moderation 236-247, web 154-162, S3 60-66)
  status GET c=16 plain / 304         111-128 / 123-148     164-180 / 181-188 req/s
(the first "before" run was on a noisier minute; the second pair is the fairer one: -13 % CPU a job,
+12 % jobs/min.) What changed: output screening on the worker's pixels, NSFW detections remembered
per photo SHA-256 (the bench's source repeats, as a user's selfie does), ?until=final reading the job
only on a final event, the sync middleware chain under ASGI, readiness without Worker.all, decode
without copies. `--profile DIR` shows where the rest goes (py-spy per role).

Measured 2026-12-03 on the same 2-core machine on a fast, quiet day, --naive 0 --single 5 --jobs 40,
alternating (before = 7355476; after = sync views served as WSGI on a pool of threads under the ASGI
server, the shading transfer's blurs on a reduced copy):
                                      before                after
  single job p50 submit → succeeded   0.21 / 0.22 s         0.22 / 0.23 s
  single job CPU                      310 / 326 ms          342 / 336 ms
  burst jobs/min                      250.7 / 291.0         279.2 / 308.5
  burst CPU per job                   389 / 352 ms          366 / 331 ms (GPU-step worker 133-138,
                                                            moderation 79-82, web 70-82, S3 37-52)
  status GET c=16 plain / 304         285-402 / 343-418     572 / 579 req/s
(the first "after" pair had the reduced blurs only; the status GETs of that pair, 340 / 357, predate
the web change.) Goals of issue #33 not reached here: CPU per job <= 250 ms, >= 400 jobs/min,
status GETs >= 1,000 req/s; the single job's p50 (<= 0.3 s) is met.

Measured 2026-12-03 later (a second session), same machine, quiet, three pairs alternating
(before = 0d8ea41; after = the web's pool threads keep their database connection, the status
GET's version read compiled once, one cache client and one RQ Redis client per process, each
upload object deleted once, WebP at libwebp effort 2, BGR->RGB by cvtColor before encoding,
a PNG upload checked by its checksums and a JPEG at 1/8 scale; the PNG check was then reverted:
a PNG is decoded in full again so a broken stream is a 400 at upload, ~6 ms more web CPU per job
here, where every source is a 512x512 PNG):
                                      before                after
  single job p50 submit → succeeded   0.21 / 0.22 / 0.22 s  0.21 / 0.19 / 0.19 s
  single job CPU                      324 / 336 / 350 ms    314 / 284 / 278 ms
  burst jobs/min                      302.6 / 294.7 / 276.5 299.3 / 338.8 / 340.3
  burst CPU per job                   334 / 342 / 365 ms    342 / 300 / 298 ms (GPU-step worker
                                                            121-133, moderation 73-81, web 55-67,
                                                            S3 38-48, Redis 7-8)
  status GET c=16 plain / 304         537/554, 512/549,     883/1063, 1077/972, 833/1091 req/s
                                      429/561
(the first pair's burst is a draw; an earlier pair with part of the changes: 282.4 -> 324.3 jobs/min,
368 -> 318 ms.) Goals of issue #33 still not reached here: CPU per job <= 250 ms, >= 400 jobs/min;
status GETs >= 1,000 req/s with ETag: 972-1,091 (met in two of three runs); p50 <= 0.3 s: met.

Measured 2026-12-03 (a third session) on the same machine on a slow, noisy day (the same code
measured 566-875 ms CPU a job: compare pairs only), --naive 0 --single 5 --jobs 40, alternating
before = 63fb1c4 and after. A first "after" (the hashes' thumbnails by a BLAS matrix product)
cost MORE: burst CPU a job 596 / 720 -> 875 / 821 ms, moderation 148 / 180 -> 253 / 245 ms, the
GPU step 240 / 285 -> 361 / 341 ms: numpy's OpenBLAS threads spin after each product, on both
cores. With the thumbnails from an integral image instead (single-threaded, the same pixels):
                                      before                after
  single job CPU                      628 / 608 ms          576 / 686 ms
  burst jobs/min                      161.1 / 148.6         168.7 / 145.9
  burst CPU per job                   640 / 694 ms          614 / 698 ms (moderation 163 / 177
                                                            -> 155 / 169)
  status GET c=16 plain / 304         466/484, 438/513      420/569, 376/476 req/s
(within this day's noise; the hashes alone: 8.9 -> 2.2 ms CPU per 720p picture, three a job.)

Measured 2026-12-03 (a fourth session), same machine, slow day again (~2x a quiet day's CPU a job),
--naive 0 --single 5 --jobs 40 --status-seconds 5, four pairs alternating, before = 8c329bd, after =
a web-size JPEG result is its own before/after view (no second copy encoded, signed, stored) and
the job's face analyses in one S3 object (4 S3 requests a job instead of 8):
                                      before                     after
  single job CPU                      642 / 600 / 656 / 650 ms   608 / 612 / 590 / 616 ms
  burst jobs/min                      154.6 / 143.3 / 148.1 / 143.1   175.5 / 162.2 / 164.6 / 159.7
  burst CPU per job                   667 / 681 / 679 / 686 ms   591 / 635 / 621 / 632 ms
    GPU-step worker                   256 / 267 / 265 / 267      221 / 243 / 241 / 240
    moderation                        163 / 164 / 167 / 166      142 / 156 / 152 / 159
    S3 (weed)                         88 / 82 / 82 / 82          75 / 78 / 62 / 64
(median -53 ms CPU a job, -8 %; +11 % jobs/min. The embedded S3 server's own cost, measured alone
with 60 requests each: a 200 kB PUT 5.3-6.2 ms of its CPU, a GET 2.3-3.0, a small PUT 3.0, a
DELETE 1.0-1.5, a LIST 2.1, plus 1-2 ms in the client; idle it burns 7-10 ms a second.)

Measured 2026-12-04, same machine, a middling day, --naive 0 --single 5 --jobs 40 --status-seconds 5,
three pairs alternating, before = 3b994e9, after = no progress figures for a quick photo job, one S3
DeleteObjects for a job's originals, the job's extra photos read once a step, known-bad hashes in two
queries a screening, the swapper's source figures known by the photo's pixels, an upload decoded whole
once remembered by its SHA-256:
                                      before                after
  single job CPU                      370 / 378 / 384 ms    386 / 412 / 330 ms
  burst jobs/min                      257.1 / 265.6 / 291.6 280.4 / 271.6 / 299.6
  burst CPU per job                   395 / 392 / 351 ms    379 / 386 / 349 ms (GPU-step worker 139 / 152
                                                            / 134, moderation 105 / 111 / 102, web 74 / 72
                                                            / 66, S3 50 / 40 / 37)
(a small gain, -1 to -4 % CPU and +1 to +9 % jobs/min, within a day whose spread is ±15 %.) Where the
rest goes, from `--profile` of the single jobs (one at a time: samples are CPU), per photo job: the NSFW
detector ~28 ms twice (the target at screening, the result at output screening: NudeNet's 320 px
letterbox, square for any picture), face analysis at screening ~30 ms (detect 9, mesh 5, two dlib
embeddings 13-15), the swap ~25-35 ms, decodes ~25 ms over three processes, C2PA signing ~8.5 ms and
reading the result back ~4.6 ms. Tried and dropped: glibc malloc thresholds (MALLOC_MMAP_THRESHOLD_ /
MALLOC_TRIM_THRESHOLD_; a 720p decode alone faults 1,562 pages a call in a micro-benchmark, 7.6 -> 3.8
ms) made no difference to the stack (343 / 334 ms plain vs 358 / 346 ms tuned); an uncompressed face
analysis .npz saves 0.3 ms. Not done, a trade: NudeNet on a rectangle (the model takes any size; a 16:9
picture as 320x192 is ~40 % less work) changes its scores by up to 0.06 on ../shared/faces, either way,
and no labelled set here says what that does to what it catches.

Measured 2026-12-04 (a later session), same machine, a middling day, --naive 0 --single 5 --jobs 40
--status-seconds 1, two pairs alternating, before = 13a1978, after = a job's first screening reads
no stored face analysis (one S3 GET a job that could only miss):
                                      before                after
  single job CPU                      348 / 336 ms          370 / 332 ms
  burst jobs/min                      294.9 / 309.6         314.7 / 315.5
  burst CPU per job                   350 / 334 ms          325 / 332 ms (S3 48 / 37 -> 35 / 36)
  GPU step busy / gap between jobs    80 % 35 ms, 82 % 31   80 % 35 ms, 80 % 34 (p50, one queued)
(within the day's noise.) The new line "GPU step busy ... gap between jobs" says what limits the
burst: the GPU-step worker is in a job's step 80 % of the span and spends a p50 of 31-35 ms between
one job's end and the next's start while that one waits (its RQ bookkeeping costs ~6 ms of CPU a
job in the profile: the rest is waiting for a core); 0.14 s a step + 0.035 s = ~340 jobs/min at
most with one GPU-step worker on this machine. Also tried, no gain (two pairs each, same day): every
model on one thread (VISAGE_MODERATION_THREADS=1, VISAGE_THREADS=1: the NSFW detector alone costs
17.5 instead of 21.9 ms of CPU a 720p picture on one thread, but the stack's CPU a job did not move:
342 / 343 vs 345 / 332 ms), and SeaweedFS's -filer.saveToFilerLimit (small objects in the filer's
store: 3.6-4.0 ms a 200 kB PUT, 1.7-2.0 ms a GET either way).

Measured 2026-12-05, same machine, --naive 0 --single 5 --jobs 40 --status-seconds 1, alternating,
before = 0775012 (three runs), after = a long-poll reads its job's own event stream, not the user's
(the burst's 16 long-polls, all under one account, were each woken by every change of all 40 jobs):
                                      before                after
  burst jobs/min                      303.5 / 284.5 / 305.0 336.6 / 331.1
  burst CPU per job                   342 / 368 / 350 ms    316 / 316 ms (web 59 / 71 / 66 -> 52 / 50,
                                                            GPU-step worker 136 / 136 / 131 -> 124 / 123)
  single job CPU                      330 / 330 / 346 ms    374 / 312 ms (one job at a time: no change
                                                            expected; the first "after" a noisy minute)
Then (same day, alternating, before = 034e204, after = a source photo decoded once per worker process,
swap.image_io.SOURCE_PHOTOS; the bench's source is one 512x512 PNG, ~7 ms a decode, twice a job):
  single job CPU                      320 / 292 / 304 ms    282 / 292 / 268 / 336 / 310 ms
  burst CPU per job                   296 / 298 / 296 ms    291 / 309 / 267 / 279 / 315 ms
  burst jobs/min                      350.3                 356.0 / 335.6 / 324.9
(medians 304 -> 292 and 296 -> 291 ms: the ~14 ms of decoding it saves is inside this machine's
spread; the status GETs of those runs: 686-864 plain, 994-1,148 with If-None-Match.)
The line "minor page faults per job" (new here) counts the memory the kernel handed each role
afresh: the workers fault 3-6 pages a job (a 720p decode alone, in a loop that frees each result at
once, faults ~2,500 and costs 7-8 instead of 2 ms: not what happens in the workers), the embedded
S3 server 400-950.

Measured 2026-12-05 (the sixteenth session), same machine, --naive 0 --single 5 --jobs 40
--status-seconds 1, alternating on the same code, VISAGE_GPU_WORKERS=1 (before: one GPU-step worker)
against the new default where the engine runs on the CPU (two: visage_run.gpu_worker_count):
                                      one GPU-step worker   two
  burst jobs/min                      353.3 / 375.4 / 380.9 395.1 / 402.2 / 429.1 / 399.1
                                      / 365.5
  burst p50 submit → succeeded        3.84 / 3.33 / 3.49 /  3.02 / 3.06 / 2.74 / 3.06 s
                                      3.63 s
  burst CPU per job                   292 / 281 / 271 / 280 287 / 290 / 266 / 288 ms (unchanged)
  GPU steps under way (mean)          0.76-0.80             1.10-1.35 (screening is then the queue)
With one, the worker spent a p50 of 24-35 ms between one job's end and the next's start while that one
waited (its bookkeeping, uploads purge and queue reads, each waiting for a core): idle ~20 % of the
burst. Two moderation workers beside two GPU-step workers: 394.5 (one: 426.0) jobs/min. An idle
GPU-step worker costs 0.7 ms of CPU a second and 415 MB resident before its first job (726 MB for
the one that measured the machine's speed). The warm-up now submits its two jobs together, so each
GPU-step worker has run one before the single jobs are timed.
"""

from __future__ import annotations

import argparse
import io
import itertools
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import cv2
import numpy as np
import psutil
import redis
import requests
import rq
from PIL import Image
from skimage import data as skdata

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from wrk import status_rate  # noqa: E402  (bench/wrk.py, beside this script)

from swap.video import synthetic  # noqa: E402  (after the repo is importable)
from webapp.ops import embedded  # noqa: E402

TERMINAL = {"succeeded", "failed", "rejected", "canceled"}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def encode(rgb: np.ndarray, fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format=fmt, quality=90)
    return buffer.getvalue()


def make_pair(
    count: int, size: tuple[int, int] = (1280, 720), source_size: tuple[int, int] | None = None
) -> tuple[bytes, list[bytes]]:
    """The astronaut as the source (her 512x512 PNG, or a JPEG of her enlarged to `source_size`,
    a phone selfie's size); `count` different targets of `size` (width, height; 720p by default):
    her mirror image on a canvas, 5/6 of its height, shifted a few pixels each, so every upload has
    its own SHA-256."""
    astronaut = skdata.astronaut()
    width, height = size
    side = height * 5 // 6
    face = cv2.resize(np.ascontiguousarray(astronaut[:, ::-1]), (side, side), interpolation=cv2.INTER_AREA)
    targets = []
    for i in range(count):
        canvas = np.full((height, width, 3), (90 + i % 40, 110, 130), np.uint8)
        x = min(width - side, (width - side) // 2 - height * 40 // 720 + (i * 7) % max(1, height * 300 // 720))
        canvas[height // 12 : height // 12 + side, x : x + side] = face
        targets.append(encode(canvas, "JPEG"))
    if source_size is None:
        return encode(astronaut, "PNG"), targets
    return encode(cv2.resize(astronaut, source_size, interpolation=cv2.INTER_CUBIC), "JPEG"), targets


def parse(ts: str | None) -> float | None:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() if ts else None


# --- 1. naive: one CLI process per job --------------------------------------------------------


def naive(source: bytes, targets: list[bytes], workdir: Path) -> float:
    (workdir / "source.png").write_bytes(source)
    started = time.perf_counter()
    for i, target in enumerate(targets):
        path = workdir / f"target-{i}.jpg"
        path.write_bytes(target)
        subprocess.run(
            [sys.executable, "-m", "swap", "run", "--source", str(workdir / "source.png"), "--target", str(path),
             "--output", str(workdir / f"out-{i}.jpg"), "--mode", "standard"],
            cwd=REPO, check=True, capture_output=True,
        )
    elapsed = time.perf_counter() - started
    return len(targets) / elapsed * 60


# --- 2. the README stack --------------------------------------------------------------------------


class Stack:
    """The README stack on its own Redis and S3 (embedded servers on free ports, data in `data_dir`)
    with a signed-in API client. `start` runs `visage_run` (SQLite unless `env` names a DATABASE_URL);
    bench/scaleout.py starts the same parts as separate processes instead."""

    def __init__(self, data_dir: Path, moderation_workers: int | None = None, blocked_term: str = "",
                 env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.process: subprocess.Popen | None = None  # the process answering on self.url
        self.logs: list = []
        self.servers = [
            embedded.start_redis(data_dir / "redis", port=embedded.free_port()),
            embedded.start_s3(data_dir / "s3", "visage-dev", "visage-dev-secret", port=embedded.free_port()),
        ]
        self.port = embedded.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ, "VISAGE_DATA_DIR": str(data_dir), "REDIS_URL": self.servers[0].url,
            "S3_ENDPOINT": self.servers[1].url.removeprefix("http://"), "S3_ACCESS_KEY": "visage-dev",
            "S3_SECRET_KEY": "visage-dev-secret", "VISAGE_DEMO_PASSWORD": "bench-password",
            "DJANGO_SETTINGS_MODULE": "webapp.settings",
            # The engine `make install` set up (MediaPipe's detector and mesh in var/models); an empty
            # models folder under the temporary data dir would measure the dlib fallback instead.
            "VISAGE_MODELS_DIR": os.environ.get("VISAGE_MODELS_DIR", str(REPO / "var" / "models")),
            # One user submits the whole burst and polls thousands of times: lift the per-user budgets.
            "VISAGE_THROTTLE_CREATE": "100000/min", "VISAGE_THROTTLE_READ": "10000000/min",
        }
        self.env.pop("DATABASE_URL", None)  # the README stack: SQLite under the data dir
        self.env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # visage_run's own, under the data dir
        self.env.update(env or {})
        if moderation_workers:
            self.env["VISAGE_MODERATION_WORKERS"] = str(moderation_workers)
        try:
            if blocked_term:  # the OCR check runs only when the admin's list has a term
                self.manage("migrate", "--verbosity", "0")
                self.manage("shell", "-c", "from moderation.models import BlockedTerm; "
                            f"BlockedTerm.objects.get_or_create(term={blocked_term!r})")
            self.start()
            self.wait_ready()
            token = requests.post(f"{self.url}/api/v1/auth/token", timeout=30,
                                  json={"username": "demo", "password": "bench-password", "name": "bench"})
            token.raise_for_status()
        except BaseException:
            self.stop()
            raise
        self.headers = {"Authorization": f"Bearer {token.json()['token']}"}
        self.session = requests.Session()
        self.session.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=64))
        self.requests = 0

    def wait_calibrated(self, timeout_s: float = 600) -> float:
        """Until the GPU worker has finished measuring its own speed (webapp.jobs.steps.calibrate: it
        runs between jobs after a start, ~25 s of one core's CPU on this machine): the figures are
        the steady state's, not a start's. Returns the seconds waited."""
        started = time.perf_counter()
        while "worker speed measured" not in (self.data_dir / "visage_run.log").read_text(errors="replace"):
            if time.perf_counter() - started > timeout_s:
                raise SystemExit(f"the GPU worker did not finish measuring its speed in {timeout_s:.0f} s")
            time.sleep(0.5)
        return time.perf_counter() - started

    def manage(self, *args: str) -> None:
        subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=self.env, check=True)

    def log(self, name: str):
        log = open(self.data_dir / f"{name}.log", "w")  # noqa: SIM115 - the process outlives this call: closed in stop()
        self.logs.append(log)
        return log

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "visage_run", "--addr", f"127.0.0.1:{self.port}"],
            cwd=REPO, env=self.env, stdout=self.log("visage_run"), stderr=subprocess.STDOUT,
        )

    def wait_ready(self) -> None:
        for _ in range(300):
            try:
                if requests.get(f"{self.url}/healthz", timeout=5).status_code == 200:
                    return
            except requests.ConnectionError:
                pass
            if self.process.poll() is not None:
                raise SystemExit(f"{self.process.args[:4]} exited; see the logs in {self.data_dir}")
            time.sleep(1)
        raise SystemExit(f"{self.url} not ready after 300 s; see the logs in {self.data_dir}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        for server in self.servers:
            server.stop()
        for log in self.logs:
            log.close()

    def submit(self, source: bytes, target: bytes, target_file: tuple[str, str] = ("photo.jpg", "image/jpeg")) -> str:
        self.requests += 1
        name, media_type = target_file
        response = self.session.post(
            f"{self.url}/api/v1/jobs", headers={**self.headers, "Idempotency-Key": str(uuid.uuid4())}, timeout=120,
            files={"source": ("me.png", source, "image/png"), "target": (name, target, media_type)},
            data={"mode": "standard", "consent": "true"},
        )
        assert response.status_code in (201, 202), response.text
        return response.json()["id"]

    def get(self, job_id: str, **params) -> requests.Response:
        self.requests += 1
        return self.session.get(f"{self.url}/api/v1/jobs/{job_id}", headers=self.headers, params=params, timeout=60)

    def wait(self, job_id: str) -> dict:
        """Until terminal: long-poll (?wait=30&until=final) when the server offers it, else ?wait=30,
        else a 0.2 s poll."""
        until_final = True
        while True:
            response = self.get(job_id, wait=30, **({"until": "final"} if until_final else {}))
            if response.status_code == 400 and until_final and "until" in response.text:
                until_final = False  # a server with ?wait= but no until=final
                continue
            if response.status_code == 400:  # no long-poll on this server: poll
                job = self.get(job_id).json()
                while job["state"] not in TERMINAL:
                    time.sleep(0.2)
                    job = self.get(job_id).json()
                return job
            if response.status_code == 200 and response.json()["state"] in TERMINAL:
                return response.json()


# --- where the CPU goes ---------------------------------------------------------------------------

ROLES = (  # first match in a process's command line names its role
    ("--queues moderation", "moderation workers"), ("--queues webhooks", "webhook worker"),
    ("visage_worker", "GPU-step worker"), ("visage_scheduler", "scheduler"), ("granian", "web (granian)"),
    ("redis-server", "redis"), ("weed", "S3 (weed)"),
)


def stack_processes(stack: Stack) -> list[tuple[str, psutil.Process]]:
    """(role, process) for every process of the stack: visage_run's tree and the embedded servers."""
    processes = [psutil.Process(stack.process.pid)]
    processes += [psutil.Process(server.process.pid) for server in stack.servers]
    processes += processes[0].children(recursive=True)
    processes += [p for server in processes[1:3] for p in server.children(recursive=True)]
    named = []
    for process in {p.pid: p for p in processes}.values():
        try:
            line = " ".join(process.cmdline())
        except psutil.NoSuchProcess:
            continue
        named.append(
            (next((name for needle, name in ROLES if needle in line), "visage_run supervisor"), process)
        )
    return named


def cpu_by_role(stack: Stack) -> dict[str, float]:
    """CPU seconds (user + system, of each process and its waited-for children) so far, per role:
    every process of the stack, its embedded servers, and this bench client. Beside them, under
    ("faults", role), the role's minor page faults so far (memory the kernel had to hand over
    afresh: each costs the CPU a few microseconds, inside the system time)."""
    totals: dict = {}
    for role, process in [*stack_processes(stack), ("bench client", psutil.Process())]:
        try:
            times = process.cpu_times()
            faults = minor_faults(process.pid)
        except (psutil.NoSuchProcess, FileNotFoundError, ProcessLookupError):
            continue
        totals[role] = (
            totals.get(role, 0.0) + times.user + times.system + times.children_user + times.children_system
        )
        totals[("faults", role)] = totals.get(("faults", role), 0) + faults
    return totals


def minor_faults(pid: int) -> int:
    """A process's minor page faults so far, its waited-for children's included (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[7]) + int(fields[8])  # minflt, cminflt (fields 10 and 11 of proc(5))


def start_profiles(stack: Stack, folder: Path) -> list[tuple[str, Path, subprocess.Popen]]:
    """py-spy (sampling, non-blocking: the sampled process is not paused) on every Python process
    of the stack until stop_profiles; the servers (Redis, weed) are not Python and are left out."""
    folder.mkdir(parents=True, exist_ok=True)
    recorders = []
    for role, process in stack_processes(stack):
        if role in ("redis", "S3 (weed)"):
            continue
        out = folder / f"{role.replace(' ', '_').replace('(', '').replace(')', '')}-{process.pid}.txt"
        recorder = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "py-spy"),
                "record",
                "--nonblocking",
                "--format",
                "raw",
                "--rate",
                "200",
                "--pid",
                str(process.pid),
                "--output",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        recorders.append((role, out, recorder))
    time.sleep(1)  # attached before the first request
    return recorders


def stop_profiles(recorders: list[tuple[str, Path, subprocess.Popen]], top: int = 25) -> str:
    """Stop the recorders (SIGINT writes the file) and print, per role, the functions with the most
    samples in their own frame (self) and anywhere on the stack (total), as shares of that role's samples."""
    for _, _, recorder in recorders:
        recorder.send_signal(signal.SIGINT)
    for _, _, recorder in recorders:
        recorder.wait(timeout=60)
    lines = []
    by_role: dict[str, list[Path]] = {}
    for role, out, _ in recorders:
        by_role.setdefault(role, []).append(out)
    for role, files in by_role.items():
        own: dict[str, int] = {}
        anywhere: dict[str, int] = {}
        samples = 0
        for path in files:
            if not path.exists():
                continue
            for row in path.read_text().splitlines():
                stack_text, _, count = row.rpartition(" ")
                frames = [
                    f
                    for f in stack_text.split(";")
                    if f and not f.startswith("process ") and not f.startswith("thread ")
                ]
                if not frames or not count.isdigit():
                    continue
                n = int(count)
                samples += n
                own[frames[-1]] = own.get(frames[-1], 0) + n
                for frame in set(frames):
                    anywhere[frame] = anywhere.get(frame, 0) + n
        if not samples:
            continue
        lines.append(f"profile {role}: {samples} samples ({', '.join(str(f) for f in files)})")
        lines.append(
            "  self: "
            + "; ".join(f"{k} {v / samples:.0%}" for k, v in sorted(own.items(), key=lambda kv: -kv[1])[:top])
        )
        lines.append(
            "  total: "
            + "; ".join(
                f"{k} {v / samples:.0%}" for k, v in sorted(anywhere.items(), key=lambda kv: -kv[1])[:top]
            )
        )
    return "\n".join(lines)


def cpu_report(before: dict[str, float], after: dict[str, float], jobs: int, unit: str = "job") -> str:
    spent = {role: after.get(role, 0.0) - before.get(role, 0.0) for role in after if isinstance(role, str)}
    total = sum(spent.values())
    parts = ", ".join(f"{role} {seconds / jobs * 1000:.0f}" for role, seconds in sorted(spent.items(), key=lambda kv: -kv[1]))
    faults = {role: after[key] - before.get(key, 0) for key in after if isinstance(key, tuple) for role in key[1:]}
    fault_parts = ", ".join(
        f"{role} {count / jobs:.0f}" for role, count in sorted(faults.items(), key=lambda kv: -kv[1]) if count >= jobs
    )
    stack = total - spent.get("bench client", 0.0)  # issue #33's measure: the stack's processes only
    return (f"CPU per {unit} {total / jobs * 1000:.0f} ms, the stack's own {stack / jobs * 1000:.0f} ({parts}); "
            f"minor page faults per {unit}: {fault_parts}")


def timings(jobs: list[dict]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"total": [], "screening": [], "gpu_queue": [], "gpu_step": []}
    for job in jobs:
        created, queued = parse(job["created_at"]), parse(job["queued_at"])
        started, completed = parse(job["started_at"]), parse(job["completed_at"])
        out["total"].append(completed - created)
        out["screening"].append(queued - created)
        out["gpu_queue"].append(started - queued)
        out["gpu_step"].append(completed - started)
    return out


def gpu_worker_gaps(jobs: list[dict], workers: int) -> str:
    """How the `workers` GPU-step workers spent the burst: how many jobs were in their step on average
    over the span (at most `workers`), and, with one worker, the gap between one job's end and the
    next job's start when that job was already queued (the worker's own per-job overhead outside
    the step: dequeue, bookkeeping, heartbeats; with several, consecutive jobs are other workers')."""
    ordered = sorted(jobs, key=lambda job: parse(job["started_at"]))
    busy = sum(parse(job["completed_at"]) - parse(job["started_at"]) for job in jobs)
    span = parse(ordered[-1]["completed_at"]) - parse(ordered[0]["started_at"])
    line = f"GPU steps under way {busy / span:.2f} on average over their span ({workers} GPU-step worker(s))"
    gaps = [
        parse(nxt["started_at"]) - parse(job["completed_at"])
        for job, nxt in itertools.pairwise(ordered)
        if parse(nxt["queued_at"]) < parse(job["completed_at"]) <= parse(nxt["started_at"])
    ]
    if workers != 1 or not gaps:
        return line
    return (f"{line}; gap between jobs with one queued: p50 {statistics.median(gaps) * 1000:.0f} ms,"
            f" p90 {percentile(gaps, 90) * 1000:.0f} ms ({len(gaps)} gaps)")


def video_job(stack: Stack, source: bytes, seconds: float, workdir: Path) -> str:
    """One clip through the API as bench/video.py renders it (1280x720, 30 fps, one moving face,
    audio): submit → succeeded from the server's timestamps, and frames a second over that."""
    spec = synthetic.ClipSpec(width=1280, height=720, fps=30, seconds=seconds, audio=True, face_height=0.35)
    clip = workdir / "clip.mp4"
    synthetic.write_clip(clip, spec, skdata.astronaut())
    cpu_before = cpu_by_role(stack)
    job = stack.wait(stack.submit(source, clip.read_bytes(), ("clip.mp4", "video/mp4")))
    cpu_after = cpu_by_role(stack)
    if job["state"] != "succeeded":
        return f"video job {job['state']}: {job.get('error')}"
    created, queued, started, completed = (
        parse(job[key]) for key in ("created_at", "queued_at", "started_at", "completed_at")
    )
    return (f"video job: a {seconds:g} s 1280x720 clip ({spec.frames} frames), submit → succeeded"
            f" {completed - created:.1f} s = {spec.frames / (completed - created):.1f} frames/s end to end"
            f" (screening {queued - created:.1f} s, GPU queue {started - queued:.1f} s, GPU {completed - started:.1f} s);"
            f" stage s: {stage_seconds(job)}\nits tasks (s after submit, from RQ's records): {task_timeline(stack, created)}"
            f"\nvideo {cpu_report(cpu_before, cpu_after, spec.frames, unit='frame')}")


def task_timeline(stack: Stack, created: float) -> str:
    """Each finished RQ task of the stack's queues (screening, segments, join) as "name worker
    start-end", seconds after `created` (a UNIX time): where a segmented job's time goes between
    its tasks. RQ records UTC without a zone."""
    connection = redis.Redis.from_url(stack.servers[0].url)
    tasks = []
    for queue in rq.Queue.all(connection=connection):
        for job_id in rq.registry.FinishedJobRegistry(queue=queue).get_job_ids():
            task = rq.job.Job.fetch(job_id, connection=connection)
            start, end = (at.replace(tzinfo=UTC).timestamp() - created if at else None
                          for at in (task.started_at, task.ended_at))
            if start is not None and end is not None and end > 0:
                where = f"[{task.args[2]}]" if task.func_name.endswith("run_segment") else ""
                tasks.append((start, end, f"{task.func_name.rsplit('.', 1)[-1]}{where} on {task.worker_name}"))
    return "; ".join(f"{name} {start:.1f}-{end:.1f}" for start, end, name in sorted(tasks))


def stage_seconds(job: dict) -> str:
    stages = (job.get("metrics") or {}).get("stage_ms") or {}
    return ", ".join(f"{name} {ms / 1000:.1f}" for name, ms in sorted(stages.items()) if ms >= 50)


def stage_medians(jobs: list[dict]) -> str:
    stages: dict[str, list[float]] = {}
    for job in jobs:
        for name, ms in ((job.get("metrics") or {}).get("stage_ms") or {}).items():
            stages.setdefault(name, []).append(ms)
    return ", ".join(f"{k} {statistics.median(v):.0f}" for k, v in sorted(stages.items()) if statistics.median(v) >= 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--naive", type=int, default=10, help="jobs for the per-process baseline")
    parser.add_argument("--single", type=int, default=5, help="one-at-a-time jobs for the latency figure")
    parser.add_argument("--concurrency", type=int, default=8, help="submitters in the burst")
    parser.add_argument("--status-seconds", type=int, default=10, help="length of each status GET run (wrk)")
    parser.add_argument("--moderation-workers", type=int, default=None)
    parser.add_argument(
        "--target-size", type=lambda text: tuple(int(v) for v in text.lower().split("x")), default=(1280, 720),
        metavar="WxH", help="the photo targets' size (default 1280x720; a 12 MP phone photo: 4032x3024)",
    )
    parser.add_argument(
        "--source-size", type=lambda text: tuple(int(v) for v in text.lower().split("x")), default=None,
        metavar="WxH", help="the source photo as a JPEG of this size (default: a 512x512 PNG; a selfie: 3024x3024)",
    )
    parser.add_argument("--video-seconds", type=float, default=0,
                        help="also one clip of this length through the API, after the photos (0: none)")
    parser.add_argument(
        "--blocked-term", default="", help="put one term on the blocked-text list, so OCR runs on every target"
    )
    parser.add_argument(
        "--profile", type=Path, default=None,
        help="record every Python process of the stack with py-spy during the single jobs, the burst and the clip: one "
        "collapsed-stack file per role in this folder's single/, burst/ and video/, and the top functions per role "
        "printed. One job at a time, no process waits for a core, so a role's samples are its CPU time; in "
        "the burst, a thread that waits for a core is sampled as busy",
    )
    args = parser.parse_args()

    source, targets = make_pair(
        args.naive + args.single + args.jobs + 2, size=args.target_size, source_size=args.source_size
    )
    with tempfile.TemporaryDirectory(prefix="visage-jobpath-") as tmp:
        tmp = Path(tmp)
        (tmp / "naive").mkdir()
        naive_rate = naive(source, targets[: args.naive], tmp / "naive") if args.naive else float("nan")
        print(f"naive (one `python -m swap run` per job, {args.naive} jobs): {naive_rate:.1f} jobs/min")

        stack = Stack(tmp / "stack", args.moderation_workers, args.blocked_term)
        try:
            rest = targets[args.naive :]
            # Warm: a worker's first job pays for what its models set up on first use; submitted
            # together, so that each GPU-step worker (two on the CPU) takes one.
            warm = [stack.submit(source, target) for target in rest[:2]]
            for job_id in warm:
                stack.wait(job_id)
            print(f"waited {stack.wait_calibrated():.0f} s for the GPU worker's speed measurement to end")
            single, cpu_before = [], cpu_by_role(stack)
            recorders = start_profiles(stack, args.profile / "single") if args.profile else []
            for target in rest[2 : 2 + args.single]:
                job = stack.wait(stack.submit(source, target))
                assert job["state"] == "succeeded", job
                single.append(job)
            if single:  # --single 0: none
                t = timings(single)
                print(f"single job (one at a time, {len(single)}): submit → succeeded p50 {statistics.median(t['total']):.2f} s"
                      f" (screening {statistics.median(t['screening']):.2f}, GPU queue {statistics.median(t['gpu_queue']):.2f},"
                      f" GPU step {statistics.median(t['gpu_step']):.2f}); GPU step stages ms: {stage_medians(single)}")
                print(f"single job {cpu_report(cpu_before, cpu_by_role(stack), len(single))}")
            if recorders:
                print(stop_profiles(recorders))

            burst_targets = rest[2 + args.single :][: args.jobs]
            if burst_targets:  # --jobs 0: no burst (a clip alone, say)
                stack.requests = 0
                cpu_before = cpu_by_role(stack)
                recorders = start_profiles(stack, args.profile / "burst") if args.profile else []
                with ThreadPoolExecutor(args.concurrency) as pool:
                    ids = list(pool.map(lambda target: stack.submit(source, target), burst_targets))
                with ThreadPoolExecutor(16) as pool:
                    burst = list(pool.map(stack.wait, ids))
                cpu_after = cpu_by_role(stack)
                if recorders:
                    print(stop_profiles(recorders))
                states = {s: sum(1 for j in burst if j["state"] == s) for s in {j["state"] for j in burst}}
                done = [j for j in burst if j["state"] == "succeeded"]
                t = timings(done)
                span = max(parse(j["completed_at"]) for j in done) - min(parse(j["created_at"]) for j in done)
                print(f"burst of {len(burst)} at concurrency {args.concurrency}: {states}; {len(done) / span * 60:.1f} jobs/min"
                      f" ({len(done) / span * 60 / naive_rate:.1f}× naive); submit → succeeded p50"
                      f" {statistics.median(t['total']):.2f} s, p99 {percentile(t['total'], 99):.2f} s;"
                      f" medians: screening {statistics.median(t['screening']):.2f} s, GPU queue"
                      f" {statistics.median(t['gpu_queue']):.2f} s, GPU step {statistics.median(t['gpu_step']):.2f} s")
                gpu_workers = sum(1 for role, _ in stack_processes(stack) if role == "GPU-step worker")
                print(f"burst {gpu_worker_gaps(done, gpu_workers)}")
                print(f"client requests per job in the burst (submit + waits): {stack.requests / len(burst):.2f}")
                print(f"burst {cpu_report(cpu_before, cpu_after, len(burst))}")

            job_id = warm[0]  # a succeeded job's status: its ETag stays current
            url = f"{stack.url}/api/v1/jobs/{job_id}"
            etag = stack.get(job_id).headers.get("ETag")
            web = [p for role, p in stack_processes(stack) if role == "web (granian)"]
            server_pid = next(p.pid for p in web if p.ppid() not in {w.pid for w in web})  # granian's main
            for label, sent in (("plain", None), ("If-None-Match → 304", etag)) if args.status_seconds else ():
                recorders = start_profiles(stack, args.profile / ("status-304" if sent else "status-plain")) if args.profile else []
                rate = status_rate(url, stack.headers, etag=sent, concurrency=16, seconds=args.status_seconds,
                                   server_pid=server_pid)
                print(f"status GET {label}: {rate}")
                if recorders:
                    print(stop_profiles(recorders))
            if args.video_seconds:
                recorders = start_profiles(stack, args.profile / "video") if args.profile else []
                print(video_job(stack, source, args.video_seconds, tmp))
                if recorders:
                    print(stop_profiles(recorders))
        finally:
            stack.stop()


if __name__ == "__main__":
    main()
