"""`manage.py visage_run`: the whole service on one machine (the README's run command).

Starts what is not configured (Redis unless REDIS_URL is set, an S3 server unless S3_ENDPOINT is
set) and, with `--inference triton` (`make run INFERENCE=triton`), the Triton stand-in
(`python -m swap serve`) on free ports of 127.0.0.1 (never the site's :8000), migrates, makes the
demo user, then runs VISAGE_MODERATION_WORKERS moderation workers (half the cores by default), one
webhook worker, the GPU-queue workers (gpu_worker_count: one where there is a GPU, at least two where
the engine runs on the CPU) and RQ's scheduler, and the web server once the workers take jobs,
restarting a worker that exits (they recycle after N jobs) and an embedded server that dies.
Ctrl-C, SIGTERM or SIGHUP (also while starting) stops every process it started, each with its own
children; a kill -9 of this supervisor ends them too (the kernel's parent-death signal, Linux). The
site's port in use is refused before anything starts, and a web server that dies ends the run with
a non-zero status. Data stays under VISAGE_DATA_DIR.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlparse

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext_noop
from prometheus_client import multiprocess

from billing import selectors as billing_selectors
from billing import services as billing_services
from billing.models import CreditPack
from swap.config import RuntimeOptions
from swap.models.repository import installed_models
from swap.serve import launcher
from webapp.jobs import readiness
from webapp.media import provenance
from webapp.ops import embedded
from webapp.serving import web_server_command

DEMO_CREDITS = Decimal("500")
# How long the site waits for the workers to take jobs before it starts anyway (and says so).
WORKERS_READY_WAIT_S = 90
# (name, credits, price in the default plan's currency): one credit is one unit of that currency.
DEFAULT_PACKS = [
    ("Starter", Decimal("5"), Decimal("5.00")),
    ("Regular", Decimal("20"), Decimal("20.00")),
    ("Large", Decimal("100"), Decimal("90.00")),
]


def gpu_worker_count() -> int:
    """How many GPU-queue workers to run: VISAGE_GPU_WORKERS, else one where onnxruntime has a GPU
    provider (a model call on a GPU is metered by its wall time, which a second worker's kernels on
    the same GPU would lengthen), else as many as the moderation workers and at least two: the
    engine runs on the CPU, metered by CPU time, which a worker beside it does not change, and one
    job's storage, database and queue work then overlaps the next job's swap (with one, a photo burst
    left the GPU step idle ~20 % of the time on 2 cores: bench/jobpath.py)."""
    if settings.GPU_WORKERS:
        return settings.GPU_WORKERS
    on_cpu = RuntimeOptions().resolved_providers() == ["CPUExecutionProvider"]
    return max(2, settings.MODERATION_WORKERS) if on_cpu else 1


class Command(BaseCommand):
    help = "Run Visage on this machine with its embedded defaults."

    def add_arguments(self, parser):
        parser.add_argument("--addr", default="127.0.0.1:8000")
        parser.add_argument(
            "--inference", choices=["local", "triton"], default="local",
            help="triton: start the Triton stand-in (python -m swap serve) and make every worker its client",
        )
        parser.add_argument("--triton-venv", type=Path, default=launcher.DEFAULT_VENV, help="Triton's own venv")

    def handle(self, *args, addr, inference, triton_venv, **options):
        servers: list[embedded.ServerProcess] = []
        started: dict[str, tuple[list[str], subprocess.Popen]] = {}
        web_exit = None
        # A stop while starting (SIGTERM), or the terminal closing (SIGHUP), still runs the clean-up
        # below: their default action ended this process and left the servers it had started running.
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, _exit_on_signal)
        try:
            port = int(addr.rsplit(":", 1)[1])
            if not embedded.port_is_free(port):  # found now, not after every worker has loaded its models
                raise CommandError(
                    f"port {port} (--addr {addr}) is already in use by {embedded.port_holder(port)}: stop that, "
                    "or give another address with --addr"
                )
            self._lock_data_dir()
            if "REDIS_URL" not in os.environ:
                servers.append(self.start_redis())
            if "S3_ENDPOINT" not in os.environ:
                servers.append(self.start_s3())
            triton = self.start_triton(triton_venv) if inference == "triton" else None
            if triton is not None:
                started["triton"] = triton  # supervised (restarted) with the workers
            self._metrics_dir()
            call_command("migrate", interactive=False, verbosity=0)
            self._provenance()
            self._demo_user()
            self._default_packs()
            if triton is not None:
                self.wait_for_triton(triton[1])  # the examples below run models in it
            call_command("visage_examples")  # the landing page's examples, made on the first start
            web_exit = self._supervise(addr, started, servers)
        finally:
            for _, process in started.values():
                _stop(process)
            for server in reversed(servers):
                server.stop()
            self.stdout.write("stopped; data kept in " + str(settings.DATA_DIR))
        if web_exit is not None:  # a failure: a script, systemd's Restart=on-failure or CI must see it
            raise CommandError(f"the web server exited with {web_exit}; see above")

    def _lock_data_dir(self) -> None:
        """One `visage_run` per data directory: two would run two Redis and S3 servers on the same
        files. The lock goes with the process (however it ends)."""
        path = settings.DATA_DIR / "visage_run.lock"
        try:
            settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
            self._lock_file = path.open("a+")
        except OSError as exc:
            raise CommandError(
                f"cannot write into VISAGE_DATA_DIR {settings.DATA_DIR} ({exc.strerror or exc}): give a folder "
                "this user can write"
            ) from None
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock_file.seek(0)
            holder = self._lock_file.read().strip() or "?"
            raise CommandError(
                f"Another visage_run (pid {holder}) is using {settings.DATA_DIR}; stop it, or give this one "
                "its own VISAGE_DATA_DIR."
            ) from None
        self._lock_file.truncate(0)
        self._lock_file.write(str(os.getpid()))
        self._lock_file.flush()

    def _start_on_port(self, name: str, wanted: int, data_dir: Path, start) -> embedded.ServerProcess:
        """On the configured port if it is free; when another program holds it, on a free port (said
        loudly), unless what holds it is a server left running on this same data directory."""
        try:
            return start(wanted)
        except embedded.PortTakenError as exc:
            if embedded.holder_uses_dir(wanted, data_dir):
                raise CommandError(
                    f"{exc}, a {name} server left running on {data_dir} by an earlier start: stop it "
                    "(kill that pid) and start again."
                ) from None
            server = start(None)  # a free port, picked again if taken before the server binds it
            self.stdout.write(self.style.WARNING(f"{name}: {exc}; using {server.url} instead"))
            return server

    def start_redis(self) -> embedded.ServerProcess:
        data_dir = settings.DATA_DIR / "redis"
        wanted = urlparse(settings.REDIS_URL).port or 6390
        server = self._start_on_port("redis", wanted, data_dir, lambda port: embedded.start_redis(data_dir, port=port))
        # The processes started below (and this one) use the server just started, on whatever port.
        os.environ["REDIS_URL"] = settings.REDIS_URL = server.url
        settings.RQ_QUEUES = {name: {**queue, "URL": server.url} for name, queue in settings.RQ_QUEUES.items()}
        settings.CACHES = {**settings.CACHES, "default": {**settings.CACHES["default"], "LOCATION": server.url}}
        self.stdout.write(f"redis: started on {server.url} (pid {server.process.pid})")
        return server

    def start_s3(self) -> embedded.ServerProcess:
        data_dir = settings.DATA_DIR / "s3"
        wanted = int(settings.S3_ENDPOINT.rsplit(":", 1)[1])
        server = self._start_on_port(
            "s3", wanted, data_dir,
            lambda port: embedded.start_s3(data_dir, settings.S3_ACCESS_KEY, settings.S3_SECRET_KEY, port=port),
        )
        os.environ["S3_ENDPOINT"] = settings.S3_ENDPOINT = server.url
        self.stdout.write(f"s3: started on {server.url} (pid {server.process.pid})")
        return server

    def start_triton(self, venv: Path) -> tuple[list[str], subprocess.Popen] | None:
        """`python -m swap serve` on the installed models, on three free ports of 127.0.0.1 (Triton's
        own defaults 8000-8002 collide with the site's :8000); every process started after this
        one is its client (VISAGE_INFERENCE, VISAGE_TRITON_URL). With no model installed there is
        nothing for Triton to serve: said so, and the stack runs local inference (the default
        engine's dlib and MediaPipe models never run in Triton). None then."""
        models_dir = Path(settings.VISAGE_MODELS_DIR)
        models = installed_models(models_dir)
        if not models:
            self.stdout.write(self.style.WARNING(
                f"triton: no models installed in {models_dir}, nothing for Triton to serve; running LOCAL "
                "inference (install models with `python -m swap models install NAME`, then start again)"
            ))
            os.environ["VISAGE_INFERENCE"] = settings.VISAGE_INFERENCE = "local"
            return None
        http_port, grpc_port, metrics_port = (embedded.free_port() for _ in range(3))
        command = [
            sys.executable, "-m", "swap", "serve", "--venv", str(venv), "--models-dir", str(models_dir),
            "--work-dir", str(settings.DATA_DIR / "triton"), "--bind-address", "127.0.0.1",
            "--http-port", str(http_port), "--grpc-port", str(grpc_port), "--metrics-port", str(metrics_port),
        ]  # fmt: skip
        process = _spawn(command)
        url = f"grpc://127.0.0.1:{grpc_port}"
        os.environ["VISAGE_INFERENCE"] = settings.VISAGE_INFERENCE = "triton"
        os.environ["VISAGE_TRITON_URL"] = settings.VISAGE_TRITON_URL = url
        self._triton_ports = (http_port, grpc_port)
        self.stdout.write(f"triton: starting on {url} (HTTP :{http_port}, metrics :{metrics_port}); {', '.join(models)}")
        return command, process

    def wait_for_triton(self, process: subprocess.Popen, timeout_s: float = 600.0) -> None:
        """Until the stand-in just started is ready, and is the server answering on its ports (not
        one that was there before); refuses to start the stack otherwise."""
        http_port, grpc_port = self._triton_ports
        deadline = time.monotonic() + timeout_s
        log = settings.DATA_DIR / "triton" / "triton.log"
        while not launcher.triton_ready(f"http://127.0.0.1:{http_port}"):
            if process.poll() is not None:
                raise CommandError(f"triton: `swap serve` exited with {process.returncode}; see above and {log}")
            if time.monotonic() > deadline:
                raise CommandError(f"triton: not ready after {timeout_s:.0f} s; see {log}")
            time.sleep(0.5)
        for port in (http_port, grpc_port):
            if not embedded.served_by_tree(port, process.pid):
                raise CommandError(
                    f"triton: the server answering on port {port} is not the one just started "
                    f"(it is {embedded.port_holder(port)})"
                )
        self.stdout.write(self.style.SUCCESS(f"triton: ready on {settings.VISAGE_TRITON_URL}"))

    def _metrics_dir(self) -> None:
        """One prometheus-client multiprocess directory for every process started below, so the
        web's /metrics reports the whole stack. Emptied at start: counters begin again with the
        processes (Prometheus handles the reset)."""
        directory = Path(os.environ.get("PROMETHEUS_MULTIPROC_DIR") or settings.DATA_DIR / "metrics")
        if directory.exists():
            shutil.rmtree(directory)
        directory.mkdir(parents=True)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)

    def _provenance(self) -> None:
        """Results are signed with C2PA Content Credentials: without a configured chain, a development
        one is generated on first start (and said so)."""
        if not settings.PROVENANCE_ENABLED:
            self.stdout.write(self.style.WARNING("provenance: DISABLED (VISAGE_PROVENANCE_ENABLED=0)"))
        elif settings.C2PA_CERT and settings.C2PA_KEY:
            self.stdout.write("provenance: signing with the configured C2PA chain")
        else:
            _, created = provenance.ensure_dev_chain()
            verb = "generated a" if created else "using the"
            self.stdout.write(self.style.WARNING(
                f"provenance: {verb} self-signed DEVELOPMENT C2PA chain in {provenance.dev_chain_dir()} "
                "(trusted by nobody else; set VISAGE_C2PA_CERT/VISAGE_C2PA_KEY for production)"
            ))
        if not settings.MARK_ENABLED:
            self.stdout.write(self.style.WARNING("visible AI mark: DISABLED (VISAGE_MARK_ENABLED=0)"))

    def _demo_user(self) -> None:
        User = get_user_model()
        password = os.environ.get("VISAGE_DEMO_PASSWORD")
        user = User.objects.filter(username="demo").first()
        if user is None:
            password = password or secrets.token_urlsafe(9)
            user = User.objects.create_user(username="demo", password=password)
            billing_services.account_top_up(user=user, amount=DEMO_CREDITS, actor=None, reason=gettext_noop("demo starting credits"))
            self.stdout.write(self.style.SUCCESS(f"demo user: demo / {password}  ({DEMO_CREDITS} credits)"))
        elif password:
            user.set_password(password)
            user.save(update_fields=["password"])
            self.stdout.write(self.style.SUCCESS(f"demo user: demo / {password}"))
        else:
            self.stdout.write("demo user: demo (password unchanged; set VISAGE_DEMO_PASSWORD to reset it)")

    def _default_packs(self) -> None:
        """A fresh install's credits page shows packs and prices (with or without a payment
        provider: without one, people request a pack and staff add it). Made once, only while the
        install has no pack at all; the admin edits or retires them."""
        if CreditPack.objects.exists():
            return
        currency = billing_selectors.default_plan().currency
        for position, (name, credits, price) in enumerate(DEFAULT_PACKS):
            CreditPack.objects.create(name=name, credits=credits, price=price, currency=currency, position=position)
        self.stdout.write(f"credit packs: made {len(DEFAULT_PACKS)} default packs (edit them in the admin)")

    def _restart_server(self, server: embedded.ServerProcess) -> embedded.ServerProcess:
        """The embedded Redis or S3 server again, on its port and data (the workers' URLs stay)."""
        self.stdout.write(self.style.WARNING(
            f"{server.name}: exited ({server.process.returncode}); restarting on port {server.port} "
            f"(its log: {server.log_path})"
        ))
        if server.name == "redis":
            return embedded.start_redis(settings.DATA_DIR / "redis", port=server.port)
        return embedded.start_s3(
            settings.DATA_DIR / "s3", settings.S3_ACCESS_KEY, settings.S3_SECRET_KEY, port=server.port
        )

    def _supervise(
        self,
        addr: str,
        started: dict[str, tuple[list[str], subprocess.Popen]],
        servers: list[embedded.ServerProcess],
    ) -> int | None:
        """Runs until stopped; returns the web server's exit status when that is what ended it.
        A worker that exits is started again, and so is an embedded server (`servers`, replaced in
        place): without it every worker failed to connect and was restarted for ever."""
        manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
        host, port = addr.rsplit(":", 1)
        commands = {
            # Screening is CPU-bound: several processes (settings.MODERATION_WORKERS), models loaded
            # once in each.
            **{
                f"moderation-worker-{n}": manage + ["visage_worker", "--queues", settings.MODERATION_QUEUE]
                for n in range(1, settings.MODERATION_WORKERS + 1)
            },
            # Webhooks on their own worker: a slow receiver never delays anyone's screening.
            "webhook-worker": manage + ["visage_worker", "--queues", settings.WEBHOOK_QUEUE],
            # The swap steps: one worker where there is a GPU, at least two where the engine runs on
            # the CPU (gpu_worker_count).
            **{
                f"gpu-worker-{n}": manage + ["visage_worker", "--queues", ",".join(settings.GPU_QUEUES)]
                for n in range(1, gpu_worker_count() + 1)
            },
            "scheduler": manage + ["visage_scheduler"],
            "web": web_server_command(host, port),
        }
        # The site's own error pages, never Django's debug pages (settings and tracebacks), unless the
        # operator asks with DEBUG=1; WhiteNoise serves the static files either way.
        os.environ.setdefault("DEBUG", "0")
        # The workers first, the site once they take jobs: a first swap then takes as long as any
        # other, and the workers load their models without the other processes' start beside them
        # on a small machine. A worker that is slower than WORKERS_READY_WAIT_S does not hold the site
        # back: the site then says "warming up, ready in about N s" (webapp.jobs.readiness).
        # The scheduler and the webhook worker start with the site: they take no part in a first swap,
        # and would only share the CPU with the workers' start.
        later = ["webhook-worker", "scheduler", "web"]
        processes = {name: _spawn(cmd) for name, cmd in commands.items() if name not in later}
        for name, (command, process) in started.items():  # already running (Triton)
            commands[name], processes[name] = command, process
        self.stdout.write("workers: loading their models…")
        waiting_since = time.monotonic()
        web_started = False
        web_exit = None
        stopping = False

        def stop(signum, frame):
            nonlocal stopping
            stopping = True

        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, stop)
        try:
            while not stopping:
                if not web_started and (
                    readiness.all_ready() or time.monotonic() - waiting_since > WORKERS_READY_WAIT_S
                ):
                    waited_s = time.monotonic() - waiting_since
                    if readiness.all_ready():
                        self.stdout.write(f"workers: ready in {waited_s:.1f} s")
                    else:
                        self.stdout.write(self.style.WARNING(
                            f"workers: not ready after {waited_s:.0f} s; starting the site, which says so"
                        ))
                    processes.update({name: _spawn(commands[name]) for name in later})
                    web_started = True
                    self.stdout.write(self.style.SUCCESS(f"Visage is starting on http://{addr}/  (Ctrl-C stops everything)"))
                for index, server in enumerate(servers):
                    if server.process.poll() is not None and not stopping:
                        servers[index] = self._restart_server(server)
                for name, process in list(processes.items()):
                    if process.poll() is not None and not stopping:
                        if name == "web":
                            self.stderr.write(f"web server exited with {process.returncode}; stopping")
                            web_exit, stopping = process.returncode, True
                            break
                        self.stdout.write(f"{name} exited ({process.returncode}); restarting")
                        multiprocess.mark_process_dead(process.pid)  # drop its live gauges (GPU)
                        time.sleep(1)
                        processes[name] = _spawn(commands[name])
                time.sleep(0.5 if web_started else 0.2)
        finally:
            for name, process in processes.items():
                _signal_group(process, signal.SIGTERM)  # all at once; _stop then waits for each
                if name in started:  # stopped in handle(), restarted or not
                    started[name] = (commands[name], process)
            for process in processes.values():
                _stop(process)
        return web_exit


def _exit_on_signal(signum, frame):
    raise SystemExit(128 + signum)


def _spawn(command: list[str]) -> subprocess.Popen:
    """A supervised process in its own process group (stopped whole: the web server's workers and
    a worker's work horse go with it), ended by the kernel if this supervisor dies (kill -9 too)."""
    return subprocess.Popen(command, start_new_session=True, preexec_fn=embedded.die_with_parent)


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the process's group (its main process may be gone while its children hold the
    port), SIGKILL after 15 s."""
    _signal_group(process, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGKILL)
        process.wait()


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:  # the group has no process left
        pass
