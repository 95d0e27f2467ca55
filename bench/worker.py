"""Per-job overhead of the GPU worker: RQ job time minus the engine's own time, over N image jobs.

    python bench/worker.py [--jobs 20]

Runs self-contained: starts the embedded Redis and S3 servers (tests/settings.py), a temporary
SQLite database, submits the astronaut pair N times through the service layer, drains the queues
with the real worker class in this process, and prints medians. The first job also pays for model
loading; later jobs must not (models load once per process).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=20)
    args = parser.parse_args()

    import django

    django.setup()
    import django_rq
    import numpy as np
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from PIL import Image
    from skimage import data as skdata

    from billing import services as billing_services
    from swap.inference.sessions import model_load_counts
    from webapp.jobs.models import Job
    from webapp.jobs.services import intake
    from webapp.jobs.worker import VisageWorker
    from webapp.media.validation import inspect_upload

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench", password="bench-pass-123")
    billing_services.account_top_up(user=user, amount=Decimal("10000"), actor=None, reason="bench")

    def upload(rgb: np.ndarray, fmt: str):
        from django.core.files.uploadedfile import SimpleUploadedFile

        buffer = io.BytesIO()
        Image.fromarray(rgb).save(buffer, format=fmt, quality=92)
        return SimpleUploadedFile("f", buffer.getvalue())

    astronaut = skdata.astronaut()
    queues = [django_rq.get_queue(n) for n in (settings.MODERATION_QUEUE, *settings.GPU_QUEUES, settings.WEBHOOK_QUEUE)]
    worker = VisageWorker(queues, connection=queues[0].connection)
    rq_ms, engine_ms, submit_ms = [], [], []
    loads_after_first = None
    for i in range(args.jobs):
        started = time.perf_counter()
        source = inspect_upload(upload(astronaut, "PNG"), field="source", allow_video=False)
        target = inspect_upload(upload(np.ascontiguousarray(astronaut[:, ::-1]), "JPEG"), field="target",
                                allow_video=False)
        job, _ = intake.job_create(user=user, source=source, target=target, options=intake.JobOptions())
        submit_ms.append((time.perf_counter() - started) * 1000)
        worker.work(burst=True)
        job = Job.objects.get(id=job.id)
        assert job.state == "succeeded", (job.state, job.error_message)
        # The job's own clock (RQ keeps no record of a finished job: result_ttl 0).
        rq_ms.append((job.completed_at - job.started_at).total_seconds() * 1000)
        engine_ms.append(job.stage_ms["total"])
        if i == 0:
            loads_after_first = dict(model_load_counts())
    assert model_load_counts() == loads_after_first, "models were loaded again after the first job"
    rest = slice(1, None)
    overhead = [r - e for r, e in zip(rq_ms[rest], engine_ms[rest], strict=True)]
    print(f"jobs: {args.jobs} (astronaut 512×512 pair, classical swapper, CPU)")
    print(f"first job: GPU-queue run {rq_ms[0]:.0f} ms (includes model loading), engine {engine_ms[0]:.0f} ms")
    print(f"later jobs: GPU-queue run median {statistics.median(rq_ms[rest]):.0f} ms, engine median "
          f"{statistics.median(engine_ms[rest]):.0f} ms")
    print(f"per-job overhead outside the engine (S3 get/put, decode/encode, DB, output screening): "
          f"median {statistics.median(overhead):.0f} ms")
    print(f"submit (validate + S3 put + DB + hold) median {statistics.median(submit_ms):.0f} ms")
    print(f"model loads after {args.jobs} jobs: {model_load_counts()} (unchanged after the first job)")


if __name__ == "__main__":
    main()
