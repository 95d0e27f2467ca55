"""The tasks of a segmented video job: one per segment, and the join.

Each segment swaps its frame range and uploads its part under the job's prefix in the uploads
bucket; the join (RQ `depends_on` all segments) concatenates the parts' packets, muxes the
original audio once over the whole result and records the outcome. Every task checks the job's
state and attempt number every few frames: a canceled job, or one the sweeper requeued as a new
attempt, stops its old segments. A failed segment is retried alone (RQ Retry); when its retries
are spent the job fails (tasks.on_video_task_failure).
"""

from __future__ import annotations

import json
import logging
import tempfile
import uuid
from dataclasses import asdict
from pathlib import Path

import cv2
import numpy as np
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_noop

from swap.video import io as video_io
from swap.video.process import NoFaceInVideo
from swap.video.segments import plan_segments, segments_from_starts
from webapp.media import storage

from ..choices import JobState
from ..models import Job
from ..services import lifecycle, stored_files
from .common import JobCanceled, check_running, run_guarded
from .video import (
    PLAN_TTL_S,
    RESULT_MEDIA_TYPE,
    SegmentStats,
    download_target,
    finish,
    plan_key,
    prepare_source,
    redis_for,
    report_progress,
    swap_clip,
)

logger = logging.getLogger(__name__)


def parts_prefix(job: Job) -> str:
    return f"{job.owner_id}/{job.id}/parts/"


def part_key(job: Job, attempt: int, index: int) -> str:
    return f"{parts_prefix(job)}{attempt}/{index:04d}.mp4"


def kept_prefix(job: Job, attempt: int) -> str:
    """The segments' kept unmarked frames (video.kept_frames) for the join, one JPEG each (quality 95:
    ~2 ms and ~90 KiB a 720p frame; lossless costs 40× the time): scratch data like the parts."""
    return f"{parts_prefix(job)}{attempt}/kept/"


def store_kept(job: Job, attempt: int, kept: list[tuple[int, np.ndarray]]) -> None:
    for index, frame in kept:
        jpeg = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
        storage.put_bytes(settings.S3_UPLOADS_BUCKET, f"{kept_prefix(job, attempt)}{index:06d}.jpg", jpeg, "image/jpeg")


def load_kept(job: Job, attempt: int) -> list[tuple[int, np.ndarray]]:
    """Every segment's kept frames, in index order."""
    prefix = kept_prefix(job, attempt)
    return [
        (int(key.removeprefix(prefix).removesuffix(".jpg")),
         cv2.imdecode(np.frombuffer(storage.get_bytes(settings.S3_UPLOADS_BUCKET, key), np.uint8), cv2.IMREAD_COLOR))
        for key in sorted(storage.list_keys(settings.S3_UPLOADS_BUCKET, prefix))
    ]


def delete_parts(job: Job) -> None:
    """Best effort: the segment parts are scratch data, never kept after the job ends."""
    try:
        storage.delete_many(settings.S3_UPLOADS_BUCKET, storage.list_keys(settings.S3_UPLOADS_BUCKET, parts_prefix(job)))
    except storage.StorageError:
        logger.exception("could not delete the video parts of job %s", job.id)


def _load(job_id: uuid.UUID, attempt: int) -> Job | None:
    job = Job.objects.select_related("source", "target").filter(id=job_id).first()
    if job is None or job.state != JobState.RUNNING or job.attempts != attempt:
        logger.info("video job %s attempt %s is not running any more; skipping", job_id, attempt)
        if job is not None and job.state != JobState.RUNNING:
            delete_parts(job)
        return None
    return job


def run_segment(job_id: uuid.UUID, attempt: int, index: int) -> None:
    job = _load(job_id, attempt)
    if job is None:
        return
    lifecycle.job_heartbeat(job_id)  # at once: the worker's heartbeat thread beats later
    run_guarded(job_id, lambda: _swap_segment(job, attempt, index), whole_job=False,
                cleanup=lambda: delete_parts(job))


def _swap_segment(job: Job, attempt: int, index: int) -> None:
    redis = redis_for(job)
    total, count, starts = redis.hmget(plan_key(job, attempt, "plan"), "total_frames", "segments", "starts")
    if count is None:
        raise RuntimeError(f"video job {job.id}: the segment plan is missing")
    total, count = int(total), int(count)
    progress_key = plan_key(job, attempt, "progress")
    with tempfile.TemporaryDirectory(prefix="visage-segment-") as tmp:
        directory = Path(tmp)
        target = download_target(job, directory)
        info = video_io.probe(target)
        # The cuts the job's run planned; a plan without them (written before they were stored) was
        # cut equal, as the run's code then did.
        planned = (segments_from_starts([int(start) for start in starts.split(b",")]) if starts
                   else plan_segments(info.frames, count))
        segment = planned[index]
        source = prepare_source(job)

        def on_progress(done: int) -> None:
            check_running(job.id, attempt)
            redis.hset(progress_key, str(index), done)
            redis.expire(progress_key, PLAN_TTL_S)
            report_progress(job, sum(int(v) for v in redis.hvals(progress_key)), total)

        part = directory / "part.mp4"
        result = swap_clip(job, source, target, part, info, on_progress=on_progress,
                           start=segment.start, stop=segment.stop)
        check_running(job.id, attempt)
        storage.put_bytes(
            settings.S3_UPLOADS_BUCKET, part_key(job, attempt, index), part.read_bytes(), RESULT_MEDIA_TYPE
        )
        store_kept(job, attempt, result.kept)
        stats_key = plan_key(job, attempt, "stats")
        redis.hset(stats_key, str(index), json.dumps(asdict(SegmentStats.of(result, source))))
        redis.expire(stats_key, PLAN_TTL_S)


def segment_gave_up(job_id: uuid.UUID) -> None:
    """A segment or the join failed for good (retries spent): the job fails, nothing is charged."""
    job = Job.objects.filter(id=job_id).first()
    if job is None:
        return
    lifecycle.job_fail(
        job_id,
        code="internal_error",
        message=gettext_noop("Part of the video could not be processed after several attempts."),
        from_states=[JobState.RUNNING],
    )
    delete_parts(job)


def finish_video_job(job_id: uuid.UUID, attempt: int) -> None:
    """All segments are done: join them, mux the original audio, store, screen, record."""
    job = _load(job_id, attempt)
    if job is None:
        return
    lifecycle.job_heartbeat(job_id)
    redis = redis_for(job)
    segments = int(redis.hget(plan_key(job, attempt, "plan"), "segments") or 0)
    raw = redis.hgetall(plan_key(job, attempt, "stats"))
    stats = {int(k): SegmentStats(**json.loads(v)) for k, v in raw.items()}
    if segments == 0 or sorted(stats) != list(range(segments)):
        raise RuntimeError(f"video job {job_id}: segment results missing ({sorted(stats)} of {segments})")
    run_guarded(job_id, lambda: _join(job, attempt, [stats[i] for i in range(segments)]), whole_job=False,
                cleanup=lambda: delete_parts(job))


def _join(job: Job, attempt: int, stats: list[SegmentStats]) -> None:
    with tempfile.TemporaryDirectory(prefix="visage-join-") as tmp:
        directory = Path(tmp)
        if sum(s.swapped_frames for s in stats) == 0:
            raise NoFaceInVideo()
        parts = []
        for index in range(len(stats)):
            path = directory / f"part-{index:04d}.mp4"
            path.write_bytes(storage.get_bytes(settings.S3_UPLOADS_BUCKET, part_key(job, attempt, index)))
            parts.append(path)
        target = download_target(job, directory)
        info = video_io.probe(target)
        wall = (timezone.now() - job.started_at).total_seconds() if job.started_at else 0.0
        outcome = finish(job, directory, parts, stats, target, info, wall, kept=load_kept(job, attempt))
        try:
            check_running(job.id, attempt)
        except JobCanceled:
            stored_files.result_discard(result_key=outcome.result_key)
            raise
        lifecycle.job_succeed(job.id, outcome)
    delete_parts(job)
