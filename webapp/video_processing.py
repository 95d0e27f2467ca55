"""The GPU step of a video job (issue #6): whole clip inline, or segments on any GPU worker.

run_job (processing.py) hands a running video job to `run_video_job`. A clip no longer than one
segment is processed right there. A longer one is cut at frame indices into segments; each runs
as its own RQ job (`run_segment`) and uploads its part under the job's prefix in the uploads
bucket; a join job (`finish_video_job`, RQ `depends_on` all segments) concatenates the parts'
packets, muxes the ORIGINAL audio once over the whole result and records the outcome.

While segments run, the parent job stays `running`: each segment and the join keep its
heartbeat fresh (a Heartbeat thread for the parent id) and report progress = frames done over
all frames, summed in Redis. Segments are enqueued at the front of the queue so the worker that
split the job picks them up next. When they still wait (every worker busy, or a failed segment
waiting out its retry backoff) the parent is silent: the stale-job sweeper asks
`segments_pending` and leaves it alone, and requeues it only when no task of its attempt is
waiting and none started recently (a segment's worker died). A segment checks the job's state
and attempt number every few frames: a canceled job, or one the sweeper requeued (a new
attempt), stops its old segments. A failed segment is retried alone (RQ
Retry); when its retries are spent the job fails.
"""

from __future__ import annotations

import io
import json
import logging
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import cv2
import django_rq
import numpy as np
from django.conf import settings
from django.utils import timezone
from rq.job import Job as RQJob

from billing.pricing import processed_size
from swap.errors import EngineError
from swap.types import SourceIdentity
from swap.video import io as video_io
from swap.video.process import ClipResult, NoFaceInVideo, process_clip
from swap.video.segments import Segment, plan_segments
from swap.video.tracking import TrackingConfig

from . import queues, services, storage
from .aigc import LABEL
from .choices import JobState
from .engine import get_pipeline
from .models import Job, before_key_for

logger = logging.getLogger(__name__)

PLAN_TTL_S = 2 * 86400
RESULT_MEDIA_TYPE = "video/mp4"


class JobCanceled(Exception):
    """The job left `running` (canceled, failed, or requeued as a new attempt): stop quietly."""


# --- settings as engine values ------------------------------------------------------------------


def tracking_config() -> TrackingConfig:
    return TrackingConfig(enabled=settings.VIDEO_TRACKING, detect_interval=settings.VIDEO_DETECT_INTERVAL)


def crf_for(mode: str) -> int:
    return settings.VIDEO_CRF.get(mode, settings.VIDEO_CRF["standard"])


def processed_video_size(info: video_io.VideoInfo, resolution: str) -> tuple[int, int]:
    """Billing's processed size (scaled down, never up), rounded down to even sides for yuv420p."""
    return video_io.even_size(*processed_size(info.width, info.height, resolution))


# --- shared steps ----------------------------------------------------------------------------------


def _download_target(job: Job, directory: Path) -> Path:
    path = directory / "target"
    path.write_bytes(storage.get_bytes(settings.S3_UPLOADS_BUCKET, job.target.s3_key))
    return path


def _prepare_source(job: Job):
    from .processing import source_images, swap_options_for  # noqa: PLC0415 - processing imports this module lazily

    return get_pipeline().prepare_source(source_images(job)), swap_options_for(job)


def _require_a_face(path: Path, size: tuple[int, int]) -> None:
    """Fail fast (before any GPU time per frame) when no sampled frame shows a face."""
    pipeline = get_pipeline()
    max_side = max(size)
    for _, frame in video_io.sample_frames(path, max_side=max_side):
        if pipeline.analyse(frame, embed=False):
            return
    raise NoFaceInVideo()


def _job_state(job_id: uuid.UUID) -> tuple[str, int] | None:
    return Job.objects.filter(id=job_id).values_list("state", "attempts").first()


def _check_running(job_id: uuid.UUID, attempt: int) -> None:
    if _job_state(job_id) != (JobState.RUNNING, attempt):
        raise JobCanceled()


def _progress(job_id: uuid.UUID, done: int, total: int) -> None:
    # 5 % is "started"; the last 5 % are the join, upload and output screening.
    services.job_progress(job_id, 5 + int(90 * min(done, total) / max(1, total)))


# --- entry from run_job -------------------------------------------------------------------------------


def run_video_job(job: Job, *, started: float) -> None:
    """The job is `running` (processing.run_job moved it). Raises EngineError / storage errors,
    and processing.JobCanceled, for run_job to map onto job states."""
    from .processing import JobCanceled as RunCanceled  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="visage-video-") as tmp:
        directory = Path(tmp)
        target = _download_target(job, directory)
        info = video_io.probe(target)
        size = processed_video_size(info, job.resolution)
        _require_a_face(target, size)
        plan = plan_segments(info.frames, info.fps, settings.VIDEO_SEGMENT_SECONDS)
        if len(plan) > 1:
            _store_plan(job, info.frames, len(plan))
            queues.enqueue_video_segments(job.id, job.attempts, len(plan), job.queue)
            logger.info("job %s: %d frames in %d segments", job.id, info.frames, len(plan))
            return
        source, options = _prepare_source(job)
        part = directory / "part.mp4"

        def on_progress(done: int) -> None:
            if _job_state(job.id) != (JobState.RUNNING, job.attempts):
                raise RunCanceled()
            _progress(job.id, done, info.frames)

        result = process_clip(
            get_pipeline(),
            source,
            target,
            part,
            size=size,
            options=options,
            crf=crf_for(job.mode),
            tracking=tracking_config(),
            on_progress=on_progress,
        )
        if result.swapped_frames == 0:
            raise NoFaceInVideo()
        outcome = _finish(
            job, directory, [part], [_stats(result, source)], target, info, time.perf_counter() - started
        )
        if _job_state(job.id) != (JobState.RUNNING, job.attempts):
            services.result_discard(result_key=outcome.result_key)
            raise RunCanceled()
        services.job_succeed(job.id, outcome)


# --- segments ----------------------------------------------------------------------------------------


def _redis(job: Job):
    return django_rq.get_connection(job.queue if job.queue in settings.GPU_QUEUES else "default")


def _key(job_id: uuid.UUID, attempt: int, what: str) -> str:
    return f"visage:video:{job_id}:{attempt}:{what}"


def _store_plan(job: Job, total_frames: int, segments: int) -> None:
    redis = _redis(job)
    key = _key(job.id, job.attempts, "plan")
    redis.hset(key, mapping={"total_frames": total_frames, "segments": segments})
    redis.expire(key, PLAN_TTL_S)


def _parts_prefix(job: Job) -> str:
    return f"{job.owner_id}/{job.id}/parts/"


def _part_key(job: Job, attempt: int, index: int) -> str:
    return f"{_parts_prefix(job)}{attempt}/{index:04d}.mp4"


# RQ states of a segment/join task that will run later without anyone's help: the job is waiting.
_WAITING = ("queued", "scheduled")


def segments_pending(job: Job) -> bool:
    """Is this running job a segmented video still waiting on segment/join tasks of its attempt?

    The parent's heartbeat only flows while one of its segments (or the join) runs, so a job whose
    segments wait in the queue behind other work, or whose failed segment waits out its retry
    backoff, looks silent. The stale-job sweeper asks this first and leaves such a job alone.
    Alive: a task of the current attempt is queued or scheduled (a retry), or was `started`
    less than JOB_HEARTBEAT_TIMEOUT_S ago (its worker has not sent a heartbeat yet). A task
    `started` longer ago under a stale parent heartbeat lost its worker: not pending, so the
    sweeper requeues the job as a new attempt. A `deferred` join only waits on the segments.
    """
    redis = _redis(job)
    segments = int(redis.hget(_key(job.id, job.attempts, "plan"), "segments") or 0)
    if segments == 0:
        return False  # not segmented (or the plan expired)
    names = [f"segment-{index}" for index in range(segments)] + ["join"]
    ids = [queues.video_task_id(job.id, job.attempts, name) for name in names]
    recent = timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)
    for task in RQJob.fetch_many(ids, connection=redis):
        if task is None:
            continue
        status = task.get_status(refresh=False)
        if status in _WAITING:
            return True
        if status == "started" and task.started_at is not None and _aware(task.started_at) > recent:
            return True
    return False


def _aware(moment: datetime) -> datetime:
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def delete_parts(job: Job) -> None:
    """Best effort: the segment parts are scratch data, never kept after the job ends."""
    try:
        for key in storage.list_keys(settings.S3_UPLOADS_BUCKET, _parts_prefix(job)):
            storage.delete(settings.S3_UPLOADS_BUCKET, key)
    except Exception:
        logger.exception("could not delete the video parts of job %s", job.id)


@dataclass
class _SegmentStats:
    frames: int
    swapped_frames: int
    inference_ms: float
    stage_ms: dict
    detections: int


def _stats(result: ClipResult, source: SourceIdentity) -> _SegmentStats:
    """Per-segment figures; each segment analysed the source photo itself, so that counts too."""
    return _SegmentStats(
        result.frames,
        result.swapped_frames,
        result.inference_ms + source.inference_ms,
        result.stage_ms,
        result.detections,
    )


def _load_job(job_id: uuid.UUID, attempt: int) -> Job | None:
    job = Job.objects.select_related("source", "target").filter(id=job_id).first()
    if job is None or job.state != JobState.RUNNING or job.attempts != attempt:
        logger.info("video job %s attempt %s is not running any more; skipping", job_id, attempt)
        if job is not None and job.state != JobState.RUNNING:
            delete_parts(job)
        return None
    return job


def run_segment(job_id: uuid.UUID, attempt: int, index: int) -> None:
    from .worker import Heartbeat  # noqa: PLC0415 - the worker module pulls in RQ's worker

    job = _load_job(job_id, attempt)
    if job is None:
        return
    services.job_heartbeat(job_id)  # at once: the Heartbeat thread's first beat comes later
    redis = _redis(job)
    total = int(redis.hget(_key(job_id, attempt, "plan"), "total_frames") or 1)
    progress_key = _key(job_id, attempt, "progress")
    try:
        with Heartbeat(job_id), tempfile.TemporaryDirectory(prefix="visage-segment-") as tmp:
            directory = Path(tmp)
            target = _download_target(job, directory)
            info = video_io.probe(target)
            segment = _segment(info, index)
            source, options = _prepare_source(job)

            def on_progress(done: int) -> None:
                _check_running(job_id, attempt)
                redis.hset(progress_key, str(index), done)
                redis.expire(progress_key, PLAN_TTL_S)
                _progress(job_id, sum(int(v) for v in redis.hvals(progress_key)), total)

            part = directory / "part.mp4"
            result = process_clip(
                get_pipeline(),
                source,
                target,
                part,
                size=processed_video_size(info, job.resolution),
                options=options,
                crf=crf_for(job.mode),
                tracking=tracking_config(),
                start=segment.start,
                stop=segment.stop,
                on_progress=on_progress,
            )
            _check_running(job_id, attempt)
            storage.put_bytes(
                settings.S3_UPLOADS_BUCKET,
                _part_key(job, attempt, index),
                part.read_bytes(),
                RESULT_MEDIA_TYPE,
            )
            stats_key = _key(job_id, attempt, "stats")
            redis.hset(stats_key, str(index), json.dumps(_stats(result, source).__dict__))
            redis.expire(stats_key, PLAN_TTL_S)
    except JobCanceled:
        logger.info("video job %s segment %s stopped: the job is no longer running", job_id, index)
        if (_job_state(job_id) or ("",))[0] != JobState.RUNNING:
            delete_parts(job)
    except storage.ObjectMissing:
        _fail(job, code="upload_missing", message="The uploaded files are no longer available.")
    except EngineError as exc:  # expected (unreadable video…): retrying cannot help
        _fail(job, code=exc.code, message=str(exc))
    # Anything else (S3 hiccup, worker fault) propagates: RQ retries this segment alone.


def _segment(info: video_io.VideoInfo, index: int) -> Segment:
    return plan_segments(info.frames, info.fps, settings.VIDEO_SEGMENT_SECONDS)[index]


def _fail(job: Job, *, code: str, message: str) -> None:
    services.job_fail(job.id, code=code, message=message, from_states=[JobState.RUNNING])
    delete_parts(job)


def segment_gave_up(job_id: uuid.UUID) -> None:
    """A segment or the join failed for good (retries spent): the job fails, nothing is charged."""
    job = Job.objects.filter(id=job_id).first()
    if job is None:
        return
    _fail(
        job,
        code="internal_error",
        message="Part of the video could not be processed after several attempts; no charge was made.",
    )


def finish_video_job(job_id: uuid.UUID, attempt: int) -> None:
    """All segments are done: join them, mux the original audio, store, screen, record."""
    from .worker import Heartbeat  # noqa: PLC0415

    job = _load_job(job_id, attempt)
    if job is None:
        return
    services.job_heartbeat(job_id)  # at once: the Heartbeat thread's first beat comes later
    redis = _redis(job)
    segments = int(redis.hget(_key(job_id, attempt, "plan"), "segments") or 0)
    raw = redis.hgetall(_key(job_id, attempt, "stats"))
    stats = {int(k): _SegmentStats(**json.loads(v)) for k, v in raw.items()}
    if segments == 0 or sorted(stats) != list(range(segments)):
        raise RuntimeError(f"video job {job_id}: segment results missing ({sorted(stats)} of {segments})")
    try:
        with Heartbeat(job_id), tempfile.TemporaryDirectory(prefix="visage-join-") as tmp:
            directory = Path(tmp)
            if sum(s.swapped_frames for s in stats.values()) == 0:
                raise NoFaceInVideo()
            parts = []
            for index in range(segments):
                path = directory / f"part-{index:04d}.mp4"
                path.write_bytes(
                    storage.get_bytes(settings.S3_UPLOADS_BUCKET, _part_key(job, attempt, index))
                )
                parts.append(path)
            target = _download_target(job, directory)
            info = video_io.probe(target)
            wall = (timezone.now() - job.started_at).total_seconds() if job.started_at else 0.0
            outcome = _finish(job, directory, parts, [stats[i] for i in range(segments)], target, info, wall)
            try:
                _check_running(job_id, attempt)
            except JobCanceled:
                services.result_discard(result_key=outcome.result_key)
                raise
            services.job_succeed(job_id, outcome)
    except JobCanceled:
        logger.info("video job %s was canceled before its segments were joined", job_id)
    except storage.ObjectMissing:
        _fail(job, code="upload_missing", message="The uploaded files are no longer available.")
        return
    except EngineError as exc:
        _fail(job, code=exc.code, message=str(exc))
        return
    delete_parts(job)


# --- the result ------------------------------------------------------------------------------------


def _finish(
    job: Job,
    directory: Path,
    parts: list[Path],
    stats: list[_SegmentStats],
    target: Path,
    info: video_io.VideoInfo,
    wall_seconds: float,
) -> services.JobOutcome:
    output = directory / "result.mp4"
    frames = video_io.join_parts(
        parts,
        output,
        fps=info.fps,
        audio_from=target if info.has_audio else None,
        metadata={"comment": f"{LABEL} (job {job.id})", "description": LABEL},
    )
    services.job_heartbeat(job.id)
    data = output.read_bytes()
    key = f"{job.owner_id}/{job.id}.mp4"
    storage.put_bytes(settings.S3_RESULTS_BUCKET, key, data, RESULT_MEDIA_TYPE)
    size = processed_video_size(info, job.resolution)
    middle = next(video_io.read_frames(target, start=frames // 2, stop=frames // 2 + 1, size=size), None)
    if middle is not None:  # the processed target's middle frame, for the before/after view
        before = cv2.imencode(".jpg", middle, [cv2.IMWRITE_JPEG_QUALITY, 88])[1].tobytes()
        storage.put_bytes(settings.S3_RESULTS_BUCKET, before_key_for(key), before, "image/jpeg")
    review = screen_video_output(job.id, output)
    stage_ms: dict[str, float] = {}
    for s in stats:
        for name, ms in s.stage_ms.items():
            stage_ms[name] = round(stage_ms.get(name, 0.0) + ms, 2)
    width, height = size
    notes = {
        "swapper": get_pipeline().swapper.name,
        "frames_swapped": sum(s.swapped_frames for s in stats),
        "segments": len(parts),
        "detections": sum(s.detections for s in stats),
        "tracking": settings.VIDEO_TRACKING,
        "audio": info.has_audio,
        "fps": float(info.fps),
    }
    return services.JobOutcome(
        result_key=key,
        result_media_type=RESULT_MEDIA_TYPE,
        result_bytes=len(data),
        frames=frames,
        width=width,
        height=height,
        gpu_seconds=sum(s.inference_ms for s in stats) / 1000,
        wall_seconds=wall_seconds,
        stage_ms=stage_ms,
        engine_notes=notes,
        needs_review=review is not None,
        review_message=review or "",
    )


# --- moderation ----------------------------------------------------------------------------------------

_SEVERITY = {"allow": 0, "review": 1, "reject": 2}


def _jpeg(frame: np.ndarray) -> bytes:
    return cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()


def screen_video_inputs(job: Job, *, source: bytes, target: bytes, extra_sources: list[bytes] = ()):
    """Input moderation for a video target: the source photo, and ~1 frame/s (at least 8) of the clip
    through moderation's screen_frames (every image check per frame; a face in at least one)."""
    from moderation import services as moderation_services  # noqa: PLC0415

    frames = [frame for _, frame in video_io.sample_frames(io.BytesIO(target))]
    first = moderation_services.screen_inputs(
        subject_id=job.id, source=source, target=None, extra_sources=extra_sources
    )
    if first.decision == "reject":
        return first
    second = moderation_services.screen_frames(subject_id=job.id, frames=frames)
    return max((first, second), key=lambda outcome: _SEVERITY.get(outcome.decision, 2))


def screen_video_output(job_id: uuid.UUID, result: Path) -> str | None:
    """Output moderation on sampled frames of the result: a message when it must wait for review."""
    from moderation import services as moderation_services  # noqa: PLC0415

    frames = [frame for _, frame in video_io.sample_frames(result)]
    outcome = moderation_services.screen_frames(subject_id=job_id, frames=frames, stage="output")
    return None if outcome.decision == "allow" else outcome.message
