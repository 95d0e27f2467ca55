"""The GPU step of a video job: the whole clip inline, or split into segments for any GPU worker.

A clip no longer than one segment is processed right here. A longer one is cut at frame
indices: the plan is stored in Redis, and one RQ task per segment plus a join task are enqueued
(dispatch.enqueue_video_segments; the work itself is in segments.py). While segments run, the
parent job stays `running`; each task keeps its heartbeat fresh (the worker reads the job id from
the task's meta) and reports progress = frames done over all frames. The stale-job sweeper asks
dispatch.children_pending before it requeues a silent segmented job.
"""

from __future__ import annotations

import contextvars
import logging
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings

from billing.pricing import processed_size
from moderation import services as moderation_services
from swap.types import SourceIdentity
from swap.video import io as video_io
from swap.video.process import ClipResult, NoFaceInVideo, process_clip
from swap.video.segments import plan_segments, segment_count
from swap.video.tracking import TrackingConfig
from webapp.media import provenance as media_provenance
from webapp.media import storage
from webapp.media.aigc import video_metadata, visible_mark
from webapp.telemetry import metrics, tracing

from .. import dispatch
from ..engine import get_pipeline, model_versions, models_used
from ..models import Job
from ..services import lifecycle, stored_files
from .common import JobCanceled, check_running, result_claim, source_images, store_result, swap_options_for

logger = logging.getLogger(__name__)

PLAN_TTL_S = 2 * 86400
RESULT_MEDIA_TYPE = "video/mp4"
SAMPLE_MAX_SIDE = 720  # output moderation's frames, as video_io.sample_frames scales them


# --- settings as engine values ------------------------------------------------------------------


def tracking_config() -> TrackingConfig:
    return TrackingConfig(enabled=settings.VIDEO_TRACKING, detect_interval=settings.VIDEO_DETECT_INTERVAL)


def crf_for(mode: str) -> int:
    return settings.VIDEO_CRF.get(mode, settings.VIDEO_CRF["standard"])


def processed_video_size(info: video_io.VideoInfo, resolution: str) -> tuple[int, int]:
    """Billing's processed size (scaled down, never up), rounded down to even sides for yuv420p."""
    return video_io.even_size(*processed_size(info.width, info.height, resolution))


# --- shared by the inline path and the segments ----------------------------------------------------


def download_target(job: Job, directory: Path) -> Path:
    path = directory / "target"
    with metrics.timed_stage("download"):
        path.write_bytes(storage.get_bytes(settings.S3_UPLOADS_BUCKET, job.target.s3_key))
    return path


def prepare_source(job: Job) -> SourceIdentity:
    return get_pipeline().prepare_source(source_images(job))


def kept_frames(info: video_io.VideoInfo) -> frozenset[int]:
    """The result frames kept unmarked on their way to the encoder: output moderation's
    samples (those video_io.sample_frames picks) and the middle frame (the poster, the before/after)."""
    return frozenset([*video_io.sample_indices(info.frames, info.duration_seconds), info.frames // 2])


def report_progress(job: Job, done: int, total: int) -> None:
    # 5 % is "started"; the last 5 % are the join, upload and output screening.
    lifecycle.job_progress(job.id, 5 + int(90 * min(done, total) / max(1, total)))


def redis_for(job: Job):
    return dispatch.rq_connection(dispatch.gpu_queue(job.queue))


def plan_key(job: Job, attempt: int, what: str) -> str:
    return f"visage:video:{job.id}:{attempt}:{what}"


@dataclass
class SegmentStats:
    frames: int
    swapped_frames: int
    inference_ms: float
    stage_ms: dict
    detections: int

    @classmethod
    def of(cls, result: ClipResult, source: SourceIdentity) -> SegmentStats:
        """Per-segment figures; each segment analysed the source photo itself, so that counts too."""
        stage_ms = dict(result.stage_ms)
        for name, ms in source.stage_ms.items():
            stage_ms[name] = round(stage_ms.get(name, 0.0) + ms, 2)
        return cls(
            result.frames,
            result.swapped_frames,
            result.inference_ms + source.inference_ms,
            stage_ms,
            result.detections,
        )


def swap_clip(job: Job, source: SourceIdentity, target: Path, part: Path, info, *, on_progress, start=0, stop=None):
    size = processed_video_size(info, job.resolution)
    return process_clip(
        get_pipeline(),
        source,
        target,
        part,
        size=size,
        options=swap_options_for(job),
        crf=crf_for(job.mode),
        tracking=tracking_config(),
        start=start,
        # Decoding stops at the frames counted (and priced) at upload, whatever the stream holds after.
        stop=info.frames if stop is None else min(stop, info.frames),
        on_progress=on_progress,
        mark=visible_mark(),
        keep=kept_frames(info),
        keep_size=video_io.sample_size(*size, SAMPLE_MAX_SIDE),
    )


# --- entry from the job's run ------------------------------------------------------------------------


def run(job: Job, *, started: float) -> None:
    """The job is `running`. Raises EngineError / storage errors / JobCanceled for run_guarded."""
    with tempfile.TemporaryDirectory(prefix="visage-video-") as tmp:
        directory = Path(tmp)
        target = download_target(job, directory)
        info = video_io.probe(target)
        _require_a_face(target, processed_video_size(info, job.resolution))
        segments = segment_count(
            info.frames, info.fps, settings.VIDEO_SEGMENT_SECONDS, settings.VIDEO_SEGMENT_MAX_SECONDS,
            workers=dispatch.live_workers(dispatch.gpu_queue(job.queue)),
        )
        if segments > 1:
            _split(job, info.frames, segments)
            return
        source = prepare_source(job)
        part = directory / "part.mp4"

        def on_progress(done: int) -> None:
            check_running(job.id, job.attempts)
            report_progress(job, done, info.frames)

        result = swap_clip(job, source, target, part, info, on_progress=on_progress)
        if result.swapped_frames == 0:
            raise NoFaceInVideo()
        outcome = finish(job, directory, [part], [SegmentStats.of(result, source)], target, info,
                         time.perf_counter() - started, kept=result.kept)
        try:
            check_running(job.id, job.attempts)
        except JobCanceled:
            stored_files.result_discard(result_key=outcome.result_key)
            raise
        lifecycle.job_succeed(job.id, outcome)


def _require_a_face(path: Path, size: tuple[int, int]) -> None:
    """Fail fast (before any GPU time per frame) when no sampled frame shows a face; the clip is
    decoded up to the first sampled frame that does. Quick looks first (the detector's upright
    passes, as screening looks); the full search (rotated retries, the fallback: 0.1-0.6 s a
    frame) only over a clip none of whose frames shows an upright face."""
    pipeline = get_pipeline()
    for retries in (False, True):
        for _, frame in video_io.iter_sampled_frames(path, max_side=max(size)):
            if pipeline.analyse(frame, embed=False, retries=retries):
                return
    raise NoFaceInVideo()


def _split(job: Job, total_frames: int, segments: int) -> None:
    redis = redis_for(job)
    key = plan_key(job, job.attempts, "plan")
    starts = ",".join(str(segment.start) for segment in plan_segments(total_frames, segments))
    redis.hset(key, mapping={"total_frames": total_frames, "segments": segments, "starts": starts})
    redis.expire(key, PLAN_TTL_S)
    dispatch.enqueue_video_segments(job.id, job.attempts, segments, job.queue)
    logger.info("job %s: %d frames in %d segments", job.id, total_frames, segments)


# --- the result ------------------------------------------------------------------------------------


def finish(
    job: Job,
    directory: Path,
    parts: list[Path],
    stats: list[SegmentStats],
    target: Path,
    info: video_io.VideoInfo,
    wall_seconds: float,
    *,
    kept: list[tuple[int, np.ndarray]],
) -> lifecycle.JobOutcome:
    """Join the parts, mux the original audio once, store the labelled result, screen it.

    `kept`: the unmarked frames the segments kept (kept_frames), in index order: output moderation
    screens them and the poster is the one nearest the middle, so the marked result is never decoded.

    The output screening (NudeNet over the kept frames, ~0.5 s for a 30 s clip on 2 cores) runs
    here while a helper thread joins, signs, decodes the poster's original and stores (~0.3 s, its
    PyAV, C2PA and S3 calls release the GIL; no database): the job's last step is the longer of
    the two, not their sum, while the other GPU worker waits for work."""
    swapper = get_pipeline().swapper.name
    claim = result_claim(job, extension="mp4", engine={"swapper": swapper})  # a query: on this thread
    size = processed_video_size(info, job.resolution)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="join") as pool:
        # In this thread's context (contextvars), so its spans and stage timers are the job's.
        stored = pool.submit(contextvars.copy_context().run, _join_and_store, job, directory, parts, target, info,
                             size, claim, kept)
        with metrics.timed_stage("output_screening"):
            review = moderation_services.screen_video_output(subject_id=job.id, frames=[frame for _, frame in kept])
        key, data, frames, provenance, join_ms = stored.result()
    lifecycle.job_heartbeat(job.id)
    # "encode": the segments' encoders and the join, one observation per job (job_succeed).
    stage_ms: dict[str, float] = {"encode": round(join_ms, 2)}
    for s in stats:
        for name, ms in s.stage_ms.items():
            stage_ms[name] = round(stage_ms.get(name, 0.0) + ms, 2)
    width, height = size
    plan = get_pipeline().mode_capabilities()[job.mode]  # every frame runs this plan
    notes = {
        "swapper": swapper,
        "mode_requested": job.mode,
        "mode_ran": plan.runs_as,
        "mode_steps": list(plan.steps),
        "visible_mark": settings.MARK_ENABLED,
        "frames_swapped": sum(s.swapped_frames for s in stats),
        "segments": len(parts),
        "detections": sum(s.detections for s in stats),
        "tracking": settings.VIDEO_TRACKING,
        "audio": info.has_audio,
        "fps": float(info.fps),
        "model_versions": model_versions(),
        "models": models_used(),  # each with its version and licence
    }
    return lifecycle.JobOutcome(
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
        needs_review=review.decision != "allow",
        review_message=review.message if review.decision != "allow" else "",
        provenance=provenance,
    )


def _join_and_store(job: Job, directory: Path, parts: list[Path], target: Path, info: video_io.VideoInfo,
                    size: tuple[int, int], claim, kept: list[tuple[int, np.ndarray]]
                    ) -> tuple[str, bytes, int, dict, float]:
    """finish's work that needs no database: the parts joined with the original audio, signed, and
    stored with the poster (the kept frame nearest the middle, beside its original at `size`). Returns the
    result's key, its bytes, its frame count, what its signature says and the join's ms."""
    output = directory / "result.mp4"
    joining = time.perf_counter()
    with tracing.span("stage encode", **{"visage.stage": "encode"}):
        frames = video_io.join_parts(parts, output, fps=info.fps, original=target, metadata=video_metadata(job.id))
    join_ms = (time.perf_counter() - joining) * 1000
    signed = media_provenance.sign_file(output, media_type=RESULT_MEDIA_TYPE, claim=claim)
    provenance = (
        media_provenance.read(signed, media_type=RESULT_MEDIA_TYPE).summary()
        if signed != output
        else {"manifest_present": False, "disabled": True}
    )
    data = signed.read_bytes()
    index, poster = min(kept, key=lambda item: abs(item[0] - info.frames // 2))
    middle = next(video_io.read_frames(target, start=index, stop=index + 1, size=size))
    with metrics.timed_stage("upload"):
        key = store_result(job, data=data, media_type=RESULT_MEDIA_TYPE, extension="mp4", before=middle,
                           unmarked=poster, claim=claim)
    return key, data, frames, provenance, join_ms
