"""What every GPU step shares: the run guard that maps outcomes to job states, the job's inputs
as engine values, and storing a labelled, marked and signed result.

Expected failures (no face, unreadable input, uploads gone) fail the job at once with a clear
message; transient faults (S3, Redis, the Triton inference service) are retried by RQ with
backoff; a user's cancel stops the step quietly at its next checkpoint.
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import time
import uuid
from collections.abc import Callable

import cv2
import numpy as np
from django.conf import settings
from django.utils.translation import gettext_noop

from billing.pricing import processed_size
from swap.errors import EngineError, InferenceUnavailable
from swap.image_io import SOURCE_PHOTOS, decode_image, decodes_reduced
from swap.types import SwapOptions
from webapp.media import provenance, storage
from webapp.media.aigc import encode_labelled, visible_mark
from webapp.media.thumbnails import (
    PREVIEW_QUALITY,
    THUMBNAIL_MEDIA_TYPE,
    THUMBNAIL_QUALITY,
    preview_frame,
    thumbnail_frame,
)

from ..choices import JobState
from ..engine import model_versions
from ..models import Job, Upload, after_key_for, before_key_for, result_is_web_size, thumbnail_key_for
from ..services import lifecycle
from ..states import current

logger = logging.getLogger(__name__)

try:
    ENGINE_VERSION = importlib.metadata.version("visage")
except importlib.metadata.PackageNotFoundError:  # running from a source tree that was never installed
    ENGINE_VERSION = "unknown"


class JobCanceled(Exception):
    """The job left `running` (canceled, failed, or requeued as a new attempt): stop quietly."""


def check_running(job_id: uuid.UUID, attempt: int) -> None:
    """A checkpoint: raise JobCanceled unless this attempt of the job is still the running one."""
    if current(job_id) != (JobState.RUNNING, attempt):
        raise JobCanceled()


def run_guarded(
    job_id: uuid.UUID, work: Callable[[], None], *, whole_job: bool, cleanup: Callable[[], None] = lambda: None
) -> None:
    """Run one GPU task of a running job and map how it ended onto the job's state.

    whole_job=True (a job's run): a transient fault puts the job back to `queued` for RQ's retry
    and an unexpected error fails the job. whole_job=False (a video segment or join): both
    propagate, so RQ retries that task alone; when its retries are spent, the task's failure
    callback fails the job. `cleanup` runs once the job has ended (scratch data of segments).
    """
    try:
        work()
    except JobCanceled:
        logger.info("job %s is no longer running; step stopped", job_id)
        if (current(job_id) or ("",))[0] != JobState.RUNNING:
            cleanup()
    except storage.ObjectMissing:
        fail_running(job_id, code="upload_missing", message=gettext_noop("The uploaded files are no longer available."))
        cleanup()
    except InferenceUnavailable:
        # Triton down or a model not ready (VISAGE_INFERENCE=triton): transient, like S3 below.
        if not whole_job or lifecycle.job_requeue_after_transient_fault(job_id, service="inference"):
            raise
    except EngineError as exc:
        fail_running(job_id, code=exc.code, message=str(exc))
        cleanup()
    except storage.StorageError:
        # RQ retries with backoff (dispatch.GPU_RETRY / SEGMENT_RETRY) while the job's attempts last.
        if not whole_job or lifecycle.job_requeue_after_transient_fault(job_id, service="storage"):
            raise
    except Exception:
        if not whole_job:
            raise
        logger.exception("job %s failed unexpectedly", job_id)
        fail_running(job_id, code="engine_error", message=gettext_noop("The face swap failed unexpectedly."))


def fail_running(job_id: uuid.UUID, *, code: str, message: str) -> None:
    lifecycle.job_fail(job_id, code=code, message=message, from_states=[JobState.RUNNING])


def fault_injection_pause() -> None:
    """Chaos testing: VISAGE_FAULT_PAUSE_S keeps a job in `running` so a test can kill the worker."""
    if settings.FAULT_PAUSE_S > 0:
        time.sleep(settings.FAULT_PAUSE_S)


# --- the job as engine values ----------------------------------------------------------------------


def source_uploads(job: Job) -> list[Upload]:
    """The source photo and any extra photos, in upload order (the engine's source order). Read from
    the job's prefetched uploads when the step loaded it so (`job_for_step`): a step asks for them
    several times."""
    return [job.source, *sorted(job.extra_sources.all(), key=lambda upload: (upload.created_at, upload.pk))]


def job_for_step(job_id: uuid.UUID) -> Job:
    """The job as a step works on it: its source, target and extra source photos read with it."""
    return Job.objects.select_related("source", "target").prefetch_related("extra_sources").get(id=job_id)


def held_source(upload: Upload) -> np.ndarray | None:
    """A source photo's pixels when this process decoded its bytes lately (image_io.SOURCE_PHOTOS: a
    user's selfie swapped into one target after another), found by the SHA-256 the platform took of
    the bytes it stored: no S3 read, no decode. None otherwise."""
    return SOURCE_PHOTOS.held(upload.sha256, max_pixels=settings.MAX_IMAGE_PIXELS)


def source_images(job: Job) -> list[np.ndarray]:
    """The source photo and any extra photos, decoded (BGR, read-only: image_io.SOURCE_PHOTOS), in
    upload order. A photo held by this process is not read again (held_source)."""
    images = []
    for upload in source_uploads(job):
        held = held_source(upload)
        if held is None:
            data = storage.get_bytes(settings.S3_UPLOADS_BUCKET, upload.s3_key)
            held = SOURCE_PHOTOS.decode(data, which="source", max_pixels=settings.MAX_IMAGE_PIXELS)
        images.append(held)
    return images


def swap_options_for(job: Job) -> SwapOptions:
    return SwapOptions(
        faces=job.faces,
        face_index=job.face_index,
        reference_index=job.reference_face_index,
        mode=job.mode,
    )


def resize_for_resolution(image: np.ndarray, resolution: str) -> np.ndarray:
    """Scale down to the job's resolution (never up), as billing's processed size says."""
    height, width = image.shape[:2]
    new_width, new_height = processed_size(width, height, resolution)
    if (new_width, new_height) == (width, height):
        return image
    return cv2.resize(image, (new_width, new_height), interpolation=cv2.INTER_AREA)


def target_photo(data: bytes, resolution: str, *, decoded: np.ndarray | None = None) -> np.ndarray:
    """The target photo as the job processes it: decoded upright and scaled down to the job's
    resolution (billing's processed size of its full size), as `resize_for_resolution` of the
    whole decoded picture, but a JPEG larger than that is decoded by libjpeg at 1/2, 1/4 or 1/8 of
    its size where that still covers it (decode_image's `scaled_to`). A 12 MP phone photo for
    1080p: decoded at 2016x1512, ~4x fewer pixels to decode, convert and area-reduce. Screening's
    face analysis and the GPU step both take the target from here, so what screening analyses and
    stores is the GPU step's picture. `decoded`: the whole picture, where the caller has it
    (screening): scaled down instead of decoded again when libjpeg would not reduce it."""
    scaled_to = functools.partial(processed_size, resolution=resolution)
    if decoded is not None and not decodes_reduced(data, scaled_to, settings.MAX_IMAGE_PIXELS):
        return resize_for_resolution(decoded, resolution)
    return decode_image(data, which="target", max_pixels=settings.MAX_IMAGE_PIXELS, scaled_to=scaled_to)


# --- the result ------------------------------------------------------------------------------------


def result_claim(job: Job, *, extension: str, engine: dict) -> provenance.ResultClaim:
    """What the result's Content Credentials say: the job's content id, a hash over the inputs'
    hashes (never the inputs), the engine and its models' versions, and the target as an ingredient (by hash)."""
    uploads = [*source_uploads(job), job.target]
    return provenance.ResultClaim(
        content_id=str(job.id),
        title=f"{job.id}.{extension}",
        inputs_sha256=provenance.inputs_digest([upload.sha256 for upload in uploads]),
        target_sha256=job.target.sha256,
        target_media_type=job.target.media_type,
        # The engine's name and version, what ran (swapper, enhancer) and each model's version.
        engine={"name": "visage-swap", "version": ENGINE_VERSION, **engine, "models": model_versions()},
    )


def sign_result(data: bytes, *, media_type: str, claim: provenance.ResultClaim) -> tuple[bytes, dict]:
    """The result signed with C2PA Content Credentials, and what reading it back says (for the job
    object). Unsigned (and said so) when an operator disabled provenance."""
    signed = provenance.sign(data, media_type=media_type, claim=claim)
    if signed is data:
        return data, {"manifest_present": False, "disabled": True}
    return signed, provenance.read(signed, media_type=media_type).summary()


def store_result(
    job: Job,
    *,
    data: bytes,
    media_type: str,
    extension: str,
    before: np.ndarray,
    unmarked: np.ndarray,
    face_boxes: list | tuple = (),
    claim: provenance.ResultClaim | None = None,
) -> str:
    """Store the (already labelled, marked and signed) result and, beside it (same retention, deleted
    together: models.result_keys): the processed target as a JPEG (`before`), and from `unmarked`
    (the result, or a frame of it, before the visible mark) the web-size JPEG of the before/after
    view (none for a result that is one: models.result_is_web_size) and the gallery's thumbnail
    cropped around `face_boxes`. Returns the result's key.

    Both copies a browser gets are marked like the download (the badge burnt in at their own size,
    so a crop keeps it), carry the metadata label, and are signed with `claim` when given: no
    unlabelled copy of a result is ever stored where a user can fetch it."""
    # The attempt in the key: an attempt the sweeper superseded (its worker was only slow) that ends
    # after the live one discards its own result, not the one the job shows (same keys before). No
    # owner in it: a share page's URLs name the key, and the owner's account id would tell anyone
    # with a link who else's shares are the same person's (the job id is random).
    key = f"{job.id}.a{job.attempts}.{extension}"
    storage.put_bytes(settings.S3_RESULTS_BUCKET, key, data, media_type)
    jpeg = cv2.imencode(".jpg", before, [cv2.IMWRITE_JPEG_QUALITY, 88])[1].tobytes()
    storage.put_bytes(settings.S3_RESULTS_BUCKET, before_key_for(key), jpeg, "image/jpeg")
    copies = [(thumbnail_key_for(key), thumbnail_frame(unmarked, face_boxes), "webp", THUMBNAIL_MEDIA_TYPE, THUMBNAIL_QUALITY)]
    if not result_is_web_size(media_type, unmarked.shape[1], unmarked.shape[0]):
        copies.append((after_key_for(key), preview_frame(unmarked), "jpeg", "image/jpeg", PREVIEW_QUALITY))
    mark = visible_mark()
    for copy_key, frame, fmt, copy_type, quality in copies:
        shown = frame if mark is None else mark.apply(frame)
        encoded = encode_labelled(shown, fmt=fmt, job_id=job.id, quality=quality)
        if claim is not None:
            encoded = provenance.sign(encoded, media_type=copy_type, claim=claim)
        storage.put_bytes(settings.S3_RESULTS_BUCKET, copy_key, encoded, copy_type)
    return key
