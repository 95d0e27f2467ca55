"""The GPU step of a photo job with and without the face-analysis cache ("analyse once").

    python bench/analysis_cache.py [--jobs 10]

Self-contained like bench/worker.py: embedded Redis and S3 (tests/settings.py), a temporary SQLite
database, the engine from VISAGE_MODELS_DIR (the tests' empty folder: dlib + classical). Each job
is the astronaut pair at 720p (source: the 512 px astronaut PNG; target: the mirrored astronaut at
1280x1280 JPEG, which 720p scales to 720x720). Screening runs first and stores the analyses; for
the "computed" jobs they are deleted before the GPU step runs, as if no cache existed. The two
kinds alternate, so drift on a shared machine hits both alike. Prints medians (no asserts).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=10, help="jobs of each kind (cached, computed)")
    args = parser.parse_args()

    import django

    django.setup()
    import cv2
    import django_rq
    import numpy as np
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from PIL import Image
    from skimage import data as skdata

    from billing import services as billing_services
    from webapp.jobs import dispatch, face_analysis
    from webapp.jobs.models import Job
    from webapp.jobs.services import intake
    from webapp.jobs.worker import VisageWorker
    from webapp.media import storage
    from webapp.media.validation import inspect_upload

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench", password="bench-pass-123")
    billing_services.account_top_up(user=user, amount=Decimal("100000"), actor=None, reason="bench")

    def upload(rgb: np.ndarray, fmt: str, field: str):
        buffer = io.BytesIO()
        Image.fromarray(rgb).save(buffer, format=fmt, quality=92)
        return inspect_upload(SimpleUploadedFile("f", buffer.getvalue()), field=field, allow_video=False)

    astronaut = skdata.astronaut()
    target_rgb = cv2.resize(np.ascontiguousarray(astronaut[:, ::-1]), (1280, 1280), interpolation=cv2.INTER_CUBIC)
    connection = django_rq.get_connection(settings.MODERATION_QUEUE)
    screening = VisageWorker([django_rq.get_queue(settings.MODERATION_QUEUE)], connection=connection)
    gpu = VisageWorker([django_rq.get_queue(name) for name in settings.GPU_QUEUES], connection=connection)

    def rq_ms(queue: str, task_id: str) -> float:
        rq_job = django_rq.get_queue(queue).fetch_job(task_id)
        return (rq_job.ended_at - rq_job.started_at).total_seconds() * 1000

    def run(cached: bool) -> dict[str, float]:
        source = upload(astronaut, "PNG", "source")
        target = upload(target_rgb, "JPEG", "target")
        options = intake.JobOptions(resolution="720p")
        job, _ = intake.job_create(user=user, source=source, target=target, options=options)
        screening.work(burst=True)
        screen_ms = rq_ms(settings.MODERATION_QUEUE, dispatch.screening_task_id(job.id))
        if not cached:
            storage.delete(settings.S3_UPLOADS_BUCKET, face_analysis.object_key(job))
        gpu.work(burst=True)
        job = Job.objects.get(id=job.id)
        assert job.state == "succeeded", (job.state, job.error_message)
        expected = "cached" if cached else "computed"
        assert job.engine_notes["face_analysis"] == expected, job.engine_notes["face_analysis"]
        return {
            "gpu_step_ms": rq_ms(job.queue, dispatch.run_task_id(job.id, job.attempts)),
            "engine_ms": job.stage_ms["total"],
            "analysis_cache_ms": job.stage_ms.get("analysis_cache", 0.0),
            "billed_gpu_s": float(job.gpu_seconds),
            "screening_ms": screen_ms,
        }

    run(cached=True)  # warm-up: model loading, first S3 connections
    results: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for _ in range(args.jobs):
        for cached in (False, True):
            results[cached].append(run(cached))

    print(f"astronaut pair, 720p (target 1280x1280 -> 720x720), {args.jobs} jobs each, medians:")
    print(f"{'':>12} {'GPU step ms':>12} {'engine ms':>10} {'cache I/O ms':>13} {'billed GPU s':>13} {'screening ms':>13}")
    for cached in (False, True):
        rows = results[cached]

        def median(name: str, rows=rows) -> float:
            return statistics.median(row[name] for row in rows)

        print(
            f"{'cached' if cached else 'computed':>12} {median('gpu_step_ms'):>12.1f} {median('engine_ms'):>10.1f} "
            f"{median('analysis_cache_ms'):>13.1f} {median('billed_gpu_s'):>13.3f} {median('screening_ms'):>13.1f}"
        )
    saved = statistics.median(r["gpu_step_ms"] for r in results[False]) - statistics.median(
        r["gpu_step_ms"] for r in results[True]
    )
    print(f"GPU step saved per job by the cache: {saved:.1f} ms (median difference)")


if __name__ == "__main__":
    main()
