"""The GPU step of a photo job: fetch the originals, swap, store the labelled result, screen it.

The stored (downloadable) result has the visible AI mark burnt in and C2PA Content Credentials
embedded; output moderation screens the unmarked pixels (issue 19).
"""

from __future__ import annotations

import time

from django.conf import settings

from moderation import services as moderation_services
from swap.image_io import decode_image
from webapp.media import storage
from webapp.media.aigc import encode_labelled, visible_mark
from webapp.telemetry import metrics

from .. import services
from ..engine import get_pipeline, model_versions
from ..models import Job
from .common import (
    check_running,
    resize_for_resolution,
    sign_result,
    source_images,
    store_result,
    swap_options_for,
)

# A PNG or WebP target gets a result in its own format; everything else becomes a JPEG.
RESULT_FORMATS = {"image/png": ("png", "image/png"), "image/webp": ("webp", "image/webp")}


def run(job: Job, *, started: float) -> None:
    with metrics.timed_stage("download"):
        sources = source_images(job)
        target_bytes = storage.get_bytes(settings.S3_UPLOADS_BUCKET, job.target.s3_key)
    check_running(job.id, job.attempts)
    services.job_progress(job.id, 20)
    outcome = swap_image(job, sources, target_bytes, started)
    services.job_succeed(job.id, outcome)  # False (result discarded) when canceled meanwhile


def swap_image(job: Job, sources: list, target_bytes: bytes, started: float) -> services.JobOutcome:
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
    fmt = "jpeg" if extension == "jpg" else extension
    boxes = [[round(float(v)) for v in face.box] for face in result.faces_used]
    with metrics.timed_stage("encode"):
        unmarked = encode_labelled(result.image, fmt=fmt, job_id=job.id)
        mark = visible_mark()
        encoded = unmarked if mark is None else encode_labelled(mark.apply(result.image), fmt=fmt, job_id=job.id)
        engine = {"swapper": result.swapper, "enhancer": result.enhancer or ""}
        encoded, provenance = sign_result(job, encoded, media_type=media_type, extension=extension, engine=engine)
    with metrics.timed_stage("upload"):
        key = store_result(job, data=encoded, media_type=media_type, extension=extension, before=target,
                           poster=result.image, face_boxes=boxes)
    with metrics.timed_stage("output_screening"):
        review = moderation_services.screen_output(subject_id=job.id, data=unmarked)
    height, width = result.image.shape[:2]
    notes = {
        "swapper": result.swapper,
        "enhancer": result.enhancer,
        "faces_swapped": len(result.faces_used),
        "source_photos": len(sources),
        "model_versions": model_versions(),
        # Billing charges the mode that ran (services.mode_that_ran), never a dearer one asked for.
        "mode_requested": result.mode_requested,
        "mode_ran": result.mode,
        "mode_steps": list(result.mode_steps),
        "visible_mark": mark is not None,
        # Where the swapped faces are (result pixels): the site opens its before/after on them.
        "face_boxes": boxes,
    }
    if result.mode_note:
        notes["mode_note"] = result.mode_note
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
        needs_review=review.decision != "allow",
        review_message=review.message if review.decision != "allow" else "",
        provenance=provenance,
    )
