"""`manage.py visage_worker --queues vip,default,batch`: a warm, non-forking worker.

GPU queues: the swap pipeline is built and warmed up once, before the first job. The moderation
queue: the detectors are loaded once the same way. The worker exits after --max-jobs jobs so a
supervisor (visage_run, systemd, Kubernetes) can recycle it and give memory back.
"""

from __future__ import annotations

import logging
import os
import time
import uuid

import cv2
import django_rq
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from prometheus_client import multiprocess

from moderation import services as moderation_services
from swap.errors import InferenceUnavailable
from swap.inference.sessions import onnxruntime_install_problem
from webapp.jobs import engine, readiness
from webapp.jobs.steps import calibrate
from webapp.jobs.worker import Sweeper, VisageWorker
from webapp.media import storage
from webapp.ops.gpu import GpuSampler
from webapp.ops.metrics_server import serve_worker_metrics

logger = logging.getLogger(__name__)


def opencv_single_threaded() -> None:
    """OpenCV's calls run on the calling thread, not on a pool of one thread a core.

    A worker's parallelism is its own: one job at a time per process, a clip's frames decoded,
    tracked, swapped (two at once) and encoded on their own threads, and as many workers as the
    machine's cores are meant to keep busy. OpenCV's pool splitting each blur and warp over every
    core on top of that only adds handovers. On 2 cores (alternating runs): a 720p clip 27.9-29.3
    instead of 30.4-32.6 ms of CPU a frame (bench/video.py); through the stack (bench/jobpath.py,
    four pairs) a 30 s clip at 55.6-61.4 instead of 54.4-59.2 frames/s, and (two pairs) a burst's
    photo job 260-265 instead of 285-292 ms of CPU, 434-443 instead of 395-407 jobs/min. OpenCV's
    own OPENCV_FOR_THREADS_NUM, where set, is left to decide."""
    if "OPENCV_FOR_THREADS_NUM" not in os.environ:
        cv2.setNumThreads(1)


class Command(BaseCommand):
    help = "Run a Visage worker (models loaded once, no fork per job)."

    def add_arguments(self, parser):
        parser.add_argument("--queues", default=",".join(settings.GPU_QUEUES),
                            help="Comma-separated queues, in priority order (default: vip,default,batch).")
        parser.add_argument("--max-jobs", type=int, default=settings.WORKER_MAX_JOBS,
                            help="Exit after this many jobs so the supervisor can recycle the process.")
        parser.add_argument("--burst", action="store_true", help="Exit when the queues are empty.")
        parser.add_argument("--name", default=None)
        parser.add_argument("--device", type=int, default=None,
                            help="GPU index for this worker (run one worker per GPU); sets VISAGE_DEVICE_ID.")
        parser.add_argument("--metrics-port", type=int, default=settings.WORKER_METRICS_PORT,
                            help="Serve this worker's Prometheus metrics on this port (0: none).")

    def handle(self, *args, queues, max_jobs, burst, name, device, metrics_port, **options):
        if device is not None:
            os.environ["VISAGE_DEVICE_ID"] = str(device)  # read when the pipeline is built below
        opencv_single_threaded()
        queue_names = [q.strip() for q in queues.split(",") if q.strip()]
        known = {settings.MODERATION_QUEUE, settings.WEBHOOK_QUEUE, *settings.GPU_QUEUES}
        unknown = [q for q in queue_names if q not in known]
        if unknown:
            raise CommandError(f"Unknown queue(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        # RQ's name for it, chosen here: the site says "warming up" under it until RQ registers it.
        name = name or uuid.uuid4().hex
        roles = readiness.roles_of(queue_names)
        warming_since = time.time()
        for role in roles:
            readiness.mark_warming(role, name, started_at=warming_since)
        try:
            idle_steps = self._load(queue_names, roles, name, warming_since)
        except BaseException:
            for role in roles:
                readiness.clear_warming(role, name)
            raise
        metrics_server = None
        if metrics_port:
            metrics_server = serve_worker_metrics(metrics_port, key=settings.METRICS_KEY)
            self.stdout.write(f"metrics on :{metrics_port}/metrics")
        gpu_sampler = None
        if any(q in settings.GPU_QUEUES for q in queue_names):
            gpu_sampler = GpuSampler(settings.GPU_SAMPLE_INTERVAL_S).start()
        sweeper = Sweeper().start()
        connection = django_rq.get_connection(queue_names[0])
        worker = VisageWorker(
            [django_rq.get_queue(q) for q in queue_names], connection=connection, name=name, idle_steps=idle_steps,
            warming=(roles, warming_since),
        )
        try:
            # The scheduler is its own process (visage_scheduler): a forked child per worker is
            # orphaned when the worker is SIGKILLed.
            worker.work(burst=burst, max_jobs=max_jobs, with_scheduler=False)
        finally:
            sweeper.stop()
            if gpu_sampler is not None:
                gpu_sampler.stop()
            if metrics_server is not None:
                metrics_server.shutdown()
            if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
                multiprocess.mark_process_dead(os.getpid())  # its live GPU gauges leave with it

    def _load(self, queue_names: list[str], roles: list[str], name: str, warming_since: float):
        """Load the models these queues need, once; returns the GPU worker's idle work (its speed
        measurement) or None."""
        storage.ensure_buckets()
        started = time.perf_counter()
        idle_steps = None
        if any(q in settings.GPU_QUEUES for q in queue_names):
            problem = onnxruntime_install_problem()
            if problem:
                self.stderr.write(self.style.WARNING(problem))
            self._wait_for_inference(engine.warm_up, engine.reset_pipeline, roles, name, warming_since)
            self.stdout.write(f"engine backends: {engine.get_pipeline().backends} "
                              f"(loaded in {time.perf_counter() - started:.1f} s)")
            if settings.WARMUP_CALIBRATION:
                # The machine's speed, measured by one of its GPU workers while no job waits for that
                # one (a job never waits for it): quotes follow it within a minute of the start.
                connection = django_rq.get_connection(queue_names[0])
                idle_steps = calibrate.measurement_steps_for_machine(engine.get_pipeline(), connection, name)
        if settings.MODERATION_QUEUE in queue_names:
            # Its face analysis is the engine's (Triton's client under VISAGE_INFERENCE=triton).
            loaded = self._wait_for_inference(moderation_services.warm_up, lambda: None, roles, name, warming_since)
            self.stdout.write("moderation models loaded: " + ", ".join(f"{k} {v:.1f} s" for k, v in loaded.items()))
        self.stdout.write(f"visage worker ready on {','.join(queue_names)} "
                          f"(models loaded in {time.perf_counter() - started:.1f} s)")
        return idle_steps

    def _wait_for_inference(self, warm_up, reset, roles: list[str], name: str, warming_since: float):
        """Load and warm the models; with VISAGE_INFERENCE=triton, wait for Triton (it may start
        after the workers, or restart) instead of exiting into a restart loop."""
        delay_s = 1.0
        while True:
            try:
                return warm_up()
            except InferenceUnavailable as exc:
                reset()
                self.stderr.write(self.style.WARNING(f"waiting for Triton: {exc}"))
                for role in roles:  # still warming, however long Triton takes
                    readiness.mark_warming(role, name, started_at=warming_since)
                time.sleep(delay_s)
                delay_s = min(delay_s * 2, 30.0)
