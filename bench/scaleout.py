"""Scale-out: many workers against one Redis, one PostgreSQL and one S3, jobs through the API.

    .venv/bin/python bench/scaleout.py [--moderation-workers 4] [--gpu-workers 4] [--jobs 200]

Starts, each in a process group (a session) of its own: the web server (webapp.serving's
web_server_command, as visage_run runs it: granian ASGI, 2 processes) and N `manage.py
visage_worker` processes, moderation workers (`--queues moderation`) and GPU-step workers
(`--queues vip,default,batch`), on one embedded Redis and one embedded S3 (`weed mini`, both from
bench/jobpath.py's Stack) and one PostgreSQL database made for the run on DATABASE_URL's server
(dropped afterwards). Then --jobs jobs go through the API (real HTTP, --concurrency submitters, each
waited for with the long-poll), and it prints:

- every job exactly once: the dequeues of each job's screening and GPU tasks, counted in every
  worker's log (RQ logs each dequeue), the job's `attempts`, and its ledger entries (one hold, one
  capture, no release);
- the ledger exact: Σ captures = the balance's drop = Σ the jobs' charges, nothing left held;
- jobs/min (first created → last completed, the server's own timestamps) and p50/p95 submit →
  succeeded;
- the longest time any worker was idle while its queue had a job waiting: queue lengths and every
  worker's running executions (RQ's `rq:worker:<name>:executions`) sampled every 0.1 s;
- connections: every 1 s, each process's established TCP connections to Redis and to PostgreSQL
  (psutil), beside the servers' own counts (CLIENT LIST, pg_stat_activity): the most per process.

No network namespaces: `unshare -n` gives a process only a loopback of its own, so every worker
would need a veth pair, addresses and the servers listening beyond 127.0.0.1; what they would show
(connections crossing a link) is what the loopback shows here, so every process shares the host's.

Measured 2026-12-02 on the 2-core CI machine, load average 13 → 31 from other work, 4 + 4 workers,
200 jobs: all succeeded, each dequeued once per task, charged once, ledger exact; 90.1 jobs/min, p50
/ p95 submit → succeeded 42.1 / 45.4 s (all submitted at once); longest idle-while-queued 0.31 s
(samples every 108 ms); at most Redis 6 / PostgreSQL 2 connections per worker, web (2 processes,
24 client requests at once) 42 / 15 (167 Redis before the cache's pools were made per process).

tests/test_scaleout.py runs a small version (2 + 2 workers, 30 jobs) and asserts the counts (never
the timings). Measured figures and the cluster's connection budget: docs/operations/scaling.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import psutil
import psycopg
import redis

# jobpath.py beside this file, also when the test imports this as bench.scaleout: appended, so that
# bench/billing.py and the like never shadow the project's packages in the test's process.
sys.path.append(str(Path(__file__).resolve().parent))

from jobpath import REPO, Stack, make_pair, parse, percentile

from webapp.serving import web_server_command  # (jobpath put the repository on the path)

MODERATION_QUEUES = ["moderation"]
GPU_QUEUES = ["vip", "default", "batch"]
DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"
SAMPLE_INTERVAL_S = 0.1
CONNECTION_INTERVAL_S = 1.0

# The demo user the Stack signs in as, with credits for every job; the dev C2PA chain results are
# signed with (what visage_run makes on its first start).
SETUP = """
from decimal import Decimal
from django.contrib.auth import get_user_model
from billing import services
from webapp.media import provenance
provenance.ensure_dev_chain()
user = get_user_model().objects.create_user(username="demo", password="bench-password")
services.account_top_up(user=user, amount=Decimal("1000000"), actor=None, reason="scale-out bench")
"""

# RQ's dequeue line: "Worker <name>: <queue>: <function>(<args>) (<task id>)" (colours when a
# terminal asks for them); "… Job OK (<task id>)" is the end of the same task, never counted.
DEQUEUE = re.compile(
    r"^Worker (?P<worker>\S+): (?:\x1b\[[0-9;]*m)?(?P<queue>\w+)(?:\x1b\[[0-9;]*m)?: (?:\x1b\[[0-9;]*m)?"
    r"\S+\(.*\)(?:\x1b\[[0-9;]*m)? \((?P<task>screen|run)-(?P<job>[0-9a-f-]{36})(?:-\d+)?\)$"
)


class ScaleOutStack(Stack):
    """The web server and every worker as separate process groups, on PostgreSQL."""

    def __init__(self, data_dir: Path, database_url: str, moderation_workers: int, gpu_workers: int) -> None:
        self.queues = {
            **{f"moderation-{n}": MODERATION_QUEUES for n in range(1, moderation_workers + 1)},
            **{f"gpu-{n}": GPU_QUEUES for n in range(1, gpu_workers + 1)},
        }
        self.workers: dict[str, subprocess.Popen] = {}
        (data_dir / "metrics").mkdir(parents=True)
        super().__init__(data_dir, env={
            "DATABASE_URL": database_url, "PROMETHEUS_MULTIPROC_DIR": str(data_dir / "metrics"),
            "VISAGE_WARMUP_CALIBRATION": "0",  # no speed measurement beside the jobs
            "VISAGE_LOG_FORMAT": "json", "DEBUG": "0",
        })
        try:
            self.wait_workers()
        except BaseException:
            self.stop()
            raise

    def start(self) -> None:
        self.manage("migrate", "--verbosity", "0")
        self.manage("shell", "-c", SETUP)
        self.process = self.spawn("web", web_server_command("127.0.0.1", str(self.port)))
        for name, queues in self.queues.items():
            self.workers[name] = self.spawn(name, [
                sys.executable, "manage.py", "visage_worker", "--queues", ",".join(queues), "--name", name,
            ])

    def spawn(self, name: str, command: list[str]) -> subprocess.Popen:
        return subprocess.Popen(command, cwd=REPO, env=self.env, start_new_session=True,
                                stdout=self.log(name), stderr=subprocess.STDOUT)

    def wait_workers(self, timeout_s: float = 600) -> None:
        """Until every worker is registered in Redis (models loaded, listening)."""
        client = self.redis()
        deadline = time.monotonic() + timeout_s
        wanted = {f"rq:worker:{name}" for name in self.queues}
        while not wanted <= {key.decode() for key in client.smembers("rq:workers")}:
            for name, process in self.workers.items():
                if process.poll() is not None:
                    log = (self.data_dir / f"{name}.log").read_text(errors="replace")
                    raise SystemExit(f"worker {name} exited:\n{log[-3000:]}")
            if time.monotonic() > deadline:
                raise SystemExit(f"workers not ready after {timeout_s:.0f} s; see the logs in {self.data_dir}")
            time.sleep(0.2)
        client.close()

    def redis(self) -> redis.Redis:
        client = redis.Redis.from_url(self.servers[0].url, socket_timeout=10)
        client.client_setname("scaleout-bench")  # left out of the server's count
        return client

    def stop(self) -> None:
        for process in [*self.workers.values(), self.process]:
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in [*self.workers.values(), self.process]:
            if process is None:
                continue
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.process = None
        super().stop()

    def worker_log_lines(self, name: str) -> list[str]:
        return (self.data_dir / f"{name}.log").read_text(errors="replace").splitlines()


# --- sampling while the jobs run ---------------------------------------------------------------


@dataclass
class Samples:
    # (monotonic time, {worker: idle while one of its queues had a job waiting})
    idle_queued: list[tuple[float, dict[str, bool]]] = field(default_factory=list)
    # per process name: connection counts to Redis and to PostgreSQL, one per connection sample
    redis: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    postgres: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    redis_server: list[int] = field(default_factory=list)  # CLIENT LIST, less the sampler's own
    postgres_server: list[int] = field(default_factory=list)  # pg_stat_activity of the run's database
    # per process name: its Redis connections by their last command (CLIENT LIST), when it had the most
    redis_commands: dict[str, Counter] = field(default_factory=dict)


def established_sockets(remote_ports: set[int]) -> dict[int, tuple[int, int]]:
    """{socket inode: (remote port, local port)} of this host's established TCP connections to
    `remote_ports` (/proc/net/tcp and tcp6 read once: psutil reads them again for every process
    asked, too slow for sampling on a busy machine)."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                remote = int(fields[2].rsplit(":", 1)[1], 16)
                if fields[3] == "01" and remote in remote_ports:  # 01: ESTABLISHED
                    found[int(fields[9])] = (remote, int(fields[1].rsplit(":", 1)[1], 16))
    return found


def socket_inodes(pid: int) -> list[int]:
    inodes = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed while we looked
        if target.startswith("socket:["):
            inodes.append(int(target[8:-1]))
    return inodes


class Sampler:
    """Queue lengths and busy workers every 0.1 s, connection counts every 1 s: two threads, so the
    slower connection count never delays the queue samples."""

    def __init__(self, stack: ScaleOutStack, database_url: str) -> None:
        self.stack = stack
        self.queue_redis = stack.redis()
        self.connection_redis = stack.redis()
        self.postgres = psycopg.connect(database_url, autocommit=True)
        self.database = urlparse(database_url).path.lstrip("/")
        self.redis_port = urlparse(stack.servers[0].url).port
        self.postgres_port = urlparse(database_url).port or 5432
        self.samples = Samples()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._every, args=(SAMPLE_INTERVAL_S, self._queues), daemon=True),
            threading.Thread(target=self._every, args=(CONNECTION_INTERVAL_S, self._connections), daemon=True),
        ]

    def __enter__(self) -> Samples:
        for thread in self._threads:
            thread.start()
        return self.samples

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self.queue_redis.close()
        self.connection_redis.close()
        self.postgres.close()

    def _every(self, interval_s: float, sample) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            sample(started)
            self._stop.wait(max(0.0, interval_s - (time.monotonic() - started)))

    def _queues(self, now: float) -> None:
        pipe = self.queue_redis.pipeline(transaction=False)
        queues = sorted({q for queues in self.stack.queues.values() for q in queues})
        for queue in queues:
            pipe.llen(f"rq:queue:{queue}")
        for name in self.stack.queues:
            pipe.scard(f"rq:worker:{name}:executions")
        replies = pipe.execute()
        waiting = dict(zip(queues, replies[: len(queues)], strict=True))
        running = dict(zip(self.stack.queues, replies[len(queues) :], strict=True))
        self.samples.idle_queued.append((now, {
            name: running[name] == 0 and any(waiting[q] for q in queues)
            for name, queues in self.stack.queues.items()
        }))

    def _connections(self, now: float) -> None:
        clients = self.connection_redis.client_list()
        last_command = {int(c["addr"].rsplit(":", 1)[1]): c["cmd"] for c in clients}
        sockets = established_sockets({self.redis_port, self.postgres_port})
        processes = {"web": self.stack.process, **self.stack.workers}
        for name, process in processes.items():
            try:  # the web server's processes are its children
                members = [process.pid, *(child.pid for child in psutil.Process(process.pid).children(recursive=True))]
                ends = [sockets[inode] for pid in members for inode in socket_inodes(pid) if inode in sockets]
            except (psutil.NoSuchProcess, FileNotFoundError):
                continue
            commands = Counter(last_command.get(local, "?") for remote, local in ends if remote == self.redis_port)
            redis_count = sum(commands.values())
            if redis_count > max(self.samples.redis[name], default=-1):
                self.samples.redis_commands[name] = commands
            self.samples.redis[name].append(redis_count)
            self.samples.postgres[name].append(sum(1 for remote, _ in ends if remote == self.postgres_port))
        self.samples.redis_server.append(sum(1 for c in clients if c.get("name") != "scaleout-bench"))
        self.samples.postgres_server.append(self.postgres.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [self.database]
        ).fetchone()[0])


def longest_idle_while_queued(samples: list[tuple[float, dict[str, bool]]]) -> dict[str, float]:
    """Per worker: the longest run of samples in which it ran nothing while its queue had a job, from
    the first such sample to the first sample after it that was not (the sampling interval's resolution)."""
    longest: dict[str, float] = defaultdict(float)
    since: dict[str, float] = {}
    for at, states in samples:
        for name, idle in states.items():
            if idle:
                since.setdefault(name, at)
            elif name in since:
                longest[name] = max(longest[name], at - since.pop(name))
            longest.setdefault(name, 0.0)
    if samples:
        for name, start in since.items():
            longest[name] = max(longest[name], samples[-1][0] - start)
    return dict(longest)


# --- the run ------------------------------------------------------------------------------------


@dataclass
class Report:
    workers: dict[str, list[str]]  # name → queues
    states: Counter
    dequeues: dict[str, Counter]  # job id → {"screen": n, "run": n}, from the workers' logs
    tasks_per_worker: Counter
    attempts: dict[str, int]
    ledger: dict[str, Counter]  # job id → {kind: entries}
    captured: Decimal
    charged: Decimal  # Σ the jobs' cost.charge as the API shows them
    balance_drop: Decimal
    held_after: Decimal
    jobs_per_min: float
    latency_p50_s: float
    latency_p95_s: float
    idle_while_queued_s: dict[str, float]
    sample_interval_s: float  # the sampler's real mean interval (a busy machine stretches it)
    sample_pause_max_s: float  # its longest interval: the idle figure's resolution at worst
    redis_max: dict[str, int]
    postgres_max: dict[str, int]
    redis_commands: dict[str, Counter]  # a process's Redis connections by last command, at its most
    redis_server_max: int
    postgres_server_max: int
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]


def postgres_url(database_url: str, database: str) -> str:
    return urlunparse(urlparse(database_url)._replace(path=f"/{database}"))


def run(*, moderation_workers: int, gpu_workers: int, jobs: int, concurrency: int = 8,
        database_url: str | None = None, out=print) -> Report:
    server = database_url or os.environ.get("DATABASE_URL") or DEFAULT_POSTGRES
    if not server.startswith(("postgres://", "postgresql://")):
        raise SystemExit(f"the scale-out run needs PostgreSQL (DATABASE_URL is {server!r})")
    admin = postgres_url(server, "postgres")
    database = f"visage_scaleout_{os.getpid()}"
    url = postgres_url(server, database)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{database}"')
    try:
        with tempfile.TemporaryDirectory(prefix="visage-scaleout-") as tmp:
            started = time.perf_counter()
            stack = ScaleOutStack(Path(tmp), url, moderation_workers, gpu_workers)
            try:
                out(f"stack up in {time.perf_counter() - started:.0f} s: web (2 processes) and "
                    f"{moderation_workers} moderation + {gpu_workers} GPU-step workers, each in its own session")
                return push(stack, url, jobs, concurrency)
            finally:
                stack.stop()
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def push(stack: ScaleOutStack, database_url: str, jobs: int, concurrency: int) -> Report:
    source, targets = make_pair(jobs)
    me_before = stack.session.get(f"{stack.url}/api/v1/me", headers=stack.headers, timeout=30).json()
    load_before = os.getloadavg()
    with Sampler(stack, database_url) as samples:
        with ThreadPoolExecutor(concurrency) as pool:
            ids = list(pool.map(lambda target: stack.submit(source, target), targets))
        with ThreadPoolExecutor(16) as pool:
            done = list(pool.map(stack.wait, ids))
    load_after = os.getloadavg()
    me_after = stack.session.get(f"{stack.url}/api/v1/me", headers=stack.headers, timeout=30).json()

    dequeues: dict[str, Counter] = {job_id: Counter() for job_id in ids}
    tasks_per_worker: Counter = Counter()
    for name in stack.queues:
        for line in stack.worker_log_lines(name):
            try:
                message = json.loads(line).get("event", "")
            except ValueError:
                continue
            match = DEQUEUE.match(message)
            if match:
                dequeues.setdefault(match["job"], Counter())[match["task"]] += 1
                tasks_per_worker[match["worker"]] += 1
    with psycopg.connect(database_url) as conn:
        attempts = {str(i): a for i, a in conn.execute(
            "SELECT id, attempts FROM webapp_job WHERE id = ANY(%s::uuid[])", [ids]).fetchall()}
        ledger: dict[str, Counter] = {job_id: Counter() for job_id in ids}
        captured = Decimal(0)
        for job_id, kind, amount in conn.execute(
            "SELECT job_id, kind, amount FROM billing_ledgerentry WHERE job_id = ANY(%s::uuid[])", [ids]
        ).fetchall():
            ledger[str(job_id)][kind] += 1
            captured += amount if kind == "capture" else 0

    succeeded = [job for job in done if job["state"] == "succeeded"]
    totals = [parse(j["completed_at"]) - parse(j["created_at"]) for j in succeeded] or [0.0]
    span = (max(parse(j["completed_at"]) for j in succeeded) - min(parse(j["created_at"]) for j in succeeded)
            if succeeded else 0.0)
    times = [at for at, _ in samples.idle_queued]
    return Report(
        workers=stack.queues,
        states=Counter(job["state"] for job in done),
        dequeues=dequeues,
        tasks_per_worker=tasks_per_worker,
        attempts=attempts,
        ledger=ledger,
        captured=captured,
        charged=sum((Decimal(job["cost"]["charge"]) for job in succeeded), Decimal(0)),
        balance_drop=Decimal(me_before["balance"]) - Decimal(me_after["balance"]),
        held_after=Decimal(me_after["held"]),
        jobs_per_min=len(succeeded) / span * 60 if span else 0.0,
        latency_p50_s=statistics.median(totals),
        latency_p95_s=percentile(totals, 95),
        idle_while_queued_s=longest_idle_while_queued(samples.idle_queued),
        sample_interval_s=(times[-1] - times[0]) / (len(times) - 1) if len(times) > 1 else 0.0,
        sample_pause_max_s=max((b - a for a, b in zip(times, times[1:], strict=False)), default=0.0),
        redis_max={name: max(counts) for name, counts in samples.redis.items()},
        postgres_max={name: max(counts) for name, counts in samples.postgres.items()},
        redis_commands=samples.redis_commands,
        redis_server_max=max(samples.redis_server),
        postgres_server_max=max(samples.postgres_server),
        load_before=load_before,
        load_after=load_after,
    )


def print_report(report: Report, out=print) -> None:
    jobs = sum(report.states.values())
    once = sum(1 for c in report.dequeues.values() if c == Counter(screen=1, run=1))
    ledger_once = sum(1 for c in report.ledger.values() if c == Counter(hold=1, capture=1))
    out(f"jobs: {jobs}, states {dict(report.states)}; {report.jobs_per_min:.1f} jobs/min; submit → succeeded "
        f"p50 {report.latency_p50_s:.2f} s, p95 {report.latency_p95_s:.2f} s")
    out(f"exactly once: {once}/{jobs} jobs dequeued once for screening and once for the GPU step "
        f"(log lines for {len(report.dequeues)} job ids); attempts {dict(Counter(report.attempts.values()))}; "
        f"ledger one hold + one capture: {ledger_once}/{jobs}")
    out(f"ledger: Σ captures {report.captured} = balance drop {report.balance_drop} = Σ charges {report.charged}; "
        f"held after {report.held_after}")
    out(f"longest idle while its queue had a job: max {max(report.idle_while_queued_s.values()):.2f} s "
        f"(sampled every {report.sample_interval_s * 1000:.0f} ms, longest pause {report.sample_pause_max_s * 1000:.0f} ms)")
    out("per process: tasks, idle-while-queued, most connections seen (Redis, PostgreSQL):")
    for name in ["web", *report.workers]:
        role = "web (granian, 2 processes)" if name == "web" else f"--queues {','.join(report.workers[name])}"
        tasks = "" if name == "web" else (f"{report.tasks_per_worker[name]} tasks, "
                                          f"idle-while-queued {report.idle_while_queued_s.get(name, 0):.2f} s, ")
        out(f"  {name:13} {role:28} {tasks}redis {report.redis_max.get(name, 0)}, "
            f"postgres {report.postgres_max.get(name, 0)}")
    for name, commands in report.redis_commands.items():
        out(f"  {name}'s Redis connections at its most, by last command: {dict(commands.most_common())}")
    out(f"servers' own counts at most: Redis clients {report.redis_server_max}, PostgreSQL backends "
        f"{report.postgres_server_max}")
    out(f"load average before / after: {report.load_before[0]:.2f} / {report.load_after[0]:.2f} "
        f"on {os.cpu_count()} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--moderation-workers", type=int, default=4)
    parser.add_argument("--gpu-workers", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8, help="submitters")
    parser.add_argument("--database-url", default=None, help="a PostgreSQL server (default: DATABASE_URL)")
    args = parser.parse_args()
    report = run(moderation_workers=args.moderation_workers, gpu_workers=args.gpu_workers, jobs=args.jobs,
                 concurrency=args.concurrency, database_url=args.database_url)
    print_report(report)


if __name__ == "__main__":
    main()
