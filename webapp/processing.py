"""The GPU step of a job: fetch the originals, run the engine, store the result, record the outcome.

Expected failures (no face, unreadable image) fail the job at once with the engine's message;
transient faults (S3, Redis) put it back for RQ's retry; anything else fails it as an engine error.
"""

from __future__ import annotations

import logging
import os
import time
import uuid

import cv2
import numpy as np
from django.conf import settings

from billing.pricing import processed_size
from swap.errors import EngineError
from swap.image_io import decode_image
from swap.types import SwapOptions

from . import services, storage
from .aigc import encode_labelled
from .choices import JobState, MediaKind
from .engine import get_pipeline
from .models import Job, before_key_for

logger = logging.getLogger(__name__)

RESULT_FORMATS = {"image/png": ("png", "image/png"), "image/webp": ("webp", "image/webp")}


class JobCanceled(Exception):
    """The user canceled while the job ran: stop quietly, nothing to record."""


def _check_still_running(job_id: uuid.UUID) -> None:
    if Job.objects.filter(id=job_id).values_list("state", flat=True).first() != JobState.RUNNING:
        raise JobCanceled()


def resize_for_resolution(image: np.ndarray, resolution: str) -> np.ndarray:
    height, width = image.shape[:2]
    new_width, new_height = processed_size(width, height, resolution)
    if (new_width, new_height) == (width, height):
        return image
    return cv2.resize(image, (new_width, new_height), interpolation=cv2.INTER_AREA)


def swap_options_for(job: Job) -> SwapOptions:
    return SwapOptions(
        faces=job.faces,
        face_index=job.face_index,
        reference_index=job.reference_face_index,
        enhance=job.mode == "hq",
    )


def run_job(job_id: uuid.UUID) -> None:
    if not services.job_start(job_id):
        logger.info("job %s is not queued any more; nothing to do", job_id)
        return
    job = Job.objects.select_related("source", "target").get(id=job_id)
    started = time.perf_counter()
    try:
        _fault_injection_pause()
        if job.target.kind == MediaKind.VIDEO:
            from .video_processing import run_video_job  # noqa: PLC0415 - PyAV only for videos

            run_video_job(job, started=started)
            return
        sources = source_images(job)
        target_bytes = storage.get_bytes(settings.S3_UPLOADS_BUCKET, job.target.s3_key)
        _check_still_running(job_id)
        services.job_progress(job_id, 20)
        outcome = _swap_image(job, sources, target_bytes, started)
        if not services.job_succeed(job_id, outcome):
            logger.info("job %s was canceled while running; its result was discarded", job_id)
    except JobCanceled:
        logger.info("job %s was canceled while running", job_id)
    except storage.ObjectMissing:
        _fail(job_id, code="upload_missing", message="The uploaded files are no longer available.")
    except EngineError as exc:
        _fail(job_id, code=exc.code, message=str(exc))
    except storage.StorageError:
        services.job_requeue_after_transient_fault(job_id)
        raise  # RQ retries with backoff (queues.GPU_RETRY)
    except Exception:
        logger.exception("job %s failed unexpectedly", job_id)
        _fail(job_id, code="engine_error", message="The face swap failed unexpectedly; no charge was made.")


def _fail(job_id: uuid.UUID, *, code: str, message: str) -> None:
    services.job_fail(job_id, code=code, message=message, from_states=[JobState.RUNNING])


def source_images(job: Job) -> list[np.ndarray]:
    """The source photo and any extra photos of the same person, decoded (BGR)."""
    uploads = [job.source, *job.extra_sources.order_by("created_at")]
    return [
        decode_image(
            storage.get_bytes(settings.S3_UPLOADS_BUCKET, upload.s3_key),
            which="source",
            max_pixels=settings.MAX_IMAGE_PIXELS,
        )
        for upload in uploads
    ]


def _swap_image(
    job: Job, sources: list[np.ndarray], target_bytes: bytes, started: float
) -> services.JobOutcome:
    pipeline = get_pipeline()
    target = decode_image(target_bytes, which="target", max_pixels=settings.MAX_IMAGE_PIXELS)
    target = resize_for_resolution(target, job.resolution)
    if job.face_sources:  # different people into different faces: one identity per photo
        identities = [pipeline.prepare_source([image]) for image in sources]
        pairs = [(item["face"], item["source"]) for item in job.face_sources]
        result = pipeline.swap_assigned(identities, target, pairs, swap_options_for(job))
        result.timings_ms["source"] = sum(identity.prepare_ms for identity in identities)
        result.timings_ms["total"] += result.timings_ms["source"]
        result.inference_ms += sum(identity.inference_ms for identity in identities)
    else:
        result = pipeline.swap_image(sources, target, swap_options_for(job))
    services.job_progress(job.id, 80)

    extension, media_type = RESULT_FORMATS.get(job.target.media_type, ("jpg", "image/jpeg"))
    encoded = encode_labelled(result.image, fmt="jpeg" if extension == "jpg" else extension, job_id=job.id)
    key = f"{job.owner_id}/{job.id}.{extension}"
    storage.put_bytes(settings.S3_RESULTS_BUCKET, key, encoded, media_type)
    # The processed target, kept beside the result (same retention) for the before/after view.
    before = cv2.imencode(".jpg", target, [cv2.IMWRITE_JPEG_QUALITY, 88])[1].tobytes()
    storage.put_bytes(settings.S3_RESULTS_BUCKET, before_key_for(key), before, "image/jpeg")

    review = _screen_output(job.id, encoded)
    height, width = result.image.shape[:2]
    notes = {
        "swapper": result.swapper,
        "enhancer": result.enhancer,
        "faces_swapped": len(result.faces_used),
        "source_photos": len(sources),
    }
    if result.enhancer_skipped_reason:
        notes["enhancer_skipped"] = result.enhancer_skipped_reason
    return services.JobOutcome(
        result_key=key,
        result_media_type=media_type,
        result_bytes=len(encoded),
        frames=1,
        width=width,
        height=height,
        gpu_seconds=result.inference_ms / 1000,
        wall_seconds=time.perf_counter() - started,
        stage_ms={k: round(v, 2) for k, v in result.timings_ms.items()},
        engine_notes=notes,
        needs_review=review is not None,
        review_message=review or "",
    )


def _screen_output(job_id: uuid.UUID, encoded: bytes) -> str | None:
    """Output moderation: a message when the result must wait for a moderator, else None."""
    from moderation import services as moderation_services  # noqa: PLC0415

    outcome = moderation_services.screen_output(subject_id=job_id, data=encoded)
    return None if outcome.decision == "allow" else outcome.message


def _fault_injection_pause() -> None:
    """Chaos testing: VISAGE_FAULT_PAUSE_S keeps a job in `running` so a test can kill the worker."""
    pause_s = float(os.environ.get("VISAGE_FAULT_PAUSE_S", "0") or 0)
    if pause_s > 0:
        time.sleep(pause_s)
