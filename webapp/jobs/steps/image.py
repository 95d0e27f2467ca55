"""The GPU step of a photo job: fetch the originals, swap, store the labelled result, screen it."""

from __future__ import annotations

import time

from django.conf import settings

from moderation import services as moderation_services
from swap.image_io import decode_image
from webapp.media import storage
from webapp.media.aigc import encode_labelled

from .. import services
from ..engine import get_pipeline
from ..models import Job
from .common import check_running, resize_for_resolution, source_images, store_result, swap_options_for

# A PNG or WebP target gets a result in its own format; everything else becomes a JPEG.
RESULT_FORMATS = {"image/png": ("png", "image/png"), "image/webp": ("webp", "image/webp")}


def run(job: Job, *, started: float) -> None:
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
    encoded = encode_labelled(result.image, fmt="jpeg" if extension == "jpg" else extension, job_id=job.id)
    boxes = [[round(float(v)) for v in face.box] for face in result.faces_used]
    key = store_result(job, data=encoded, media_type=media_type, extension=extension, before=target,
                       poster=result.image, face_boxes=boxes)
    review = moderation_services.screen_output(subject_id=job.id, data=encoded)
    height, width = result.image.shape[:2]
    notes = {
        "swapper": result.swapper,
        "enhancer": result.enhancer,
        "faces_swapped": len(result.faces_used),
        "source_photos": len(sources),
        # Where the swapped faces are (result pixels): the site opens its before/after on them.
        "face_boxes": boxes,
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
        needs_review=review.decision != "allow",
        review_message=review.message if review.decision != "allow" else "",
    )
