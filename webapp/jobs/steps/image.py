"""The GPU step of a photo job: fetch the originals, swap, store the labelled result, screen it.

The stored (downloadable) result has the visible AI mark burnt in and C2PA Content Credentials
embedded; output moderation screens the unmarked pixels as the worker holds them (never an
encoded copy of its own).
"""

from __future__ import annotations

import time

import numpy as np
from django.conf import settings

from moderation import services as moderation_services
from swap.face_analysis import FaceAnalysis
from swap.pipeline import SOURCE_ANALYSIS_MODE, Pipeline, target_analysis_mode
from swap.types import Face, SourceIdentity, SwapResult
from webapp.media import storage
from webapp.media.aigc import encode_labelled, visible_mark
from webapp.telemetry import metrics

from .. import face_analysis
from ..engine import get_pipeline, model_versions, models_used
from ..models import Job
from ..services import lifecycle
from .common import (
    check_running,
    result_claim,
    sign_result,
    source_images,
    source_uploads,
    store_result,
    swap_options_for,
    target_photo,
)

# A PNG or WebP target gets a result in its own format; everything else becomes a JPEG.
RESULT_FORMATS = {"image/png": ("png", "image/png"), "image/webp": ("webp", "image/webp")}
# A photo job says it has swapped (progress 80, before the result is encoded, stored and screened)
# only when it has run this long: most take a fraction of it, and a figure nobody sees between
# "running" and "succeeded" still cost a row update, a read and an event to every open stream.
PROGRESS_AFTER_S = 1.0


def run(job: Job, *, started: float) -> None:
    with metrics.timed_stage("download"):
        sources = source_images(job)
        target_bytes = storage.get_bytes(settings.S3_UPLOADS_BUCKET, job.target.s3_key)
    check_running(job.id, job.attempts)
    outcome = swap_image(job, sources, target_bytes, started)
    lifecycle.job_succeed(job.id, outcome)  # False (result discarded) when canceled meanwhile


def swap_image(job: Job, sources: list, target_bytes: bytes, started: float) -> lifecycle.JobOutcome:
    pipeline = get_pipeline()
    target = target_photo(target_bytes, job.resolution)
    options = swap_options_for(job)
    analyses = _CachedAnalyses(job, pipeline, sources, target)
    source_faces = analyses.source_faces()
    if job.face_sources:  # different people into different faces: one identity per photo
        identities = [
            pipeline.prepare_source([image], faces=[faces]) for image, faces in zip(sources, source_faces, strict=True)
        ]
        pairs = [(item["face"], item["source"]) for item in job.face_sources]
        result = pipeline.swap_assigned(identities, target, pairs, options, faces=analyses.target_faces())
    else:  # Pipeline.swap_image, keeping the identity for its analyses
        identities = [pipeline.prepare_source(sources, faces=source_faces)]
        result = pipeline.swap_frame(identities[0], target, options, faces=analyses.target_faces())
    result.timings_ms["source"] = sum(identity.prepare_ms for identity in identities)
    for identity in identities:  # the source photos' own detect/landmarks/embed (none when cached)
        for name, ms in identity.stage_ms.items():
            result.timings_ms[name] = result.timings_ms.get(name, 0.0) + ms
    result.timings_ms["total"] += result.timings_ms["source"]
    result.inference_ms += sum(identity.inference_ms for identity in identities)
    # The job is billed for its face analysis once, whichever worker made it.
    result.inference_ms += analyses.cached_inference_ms()
    analyses.store_computed(identities, result)
    if time.perf_counter() - started >= PROGRESS_AFTER_S:
        lifecycle.job_progress(job.id, 80)

    extension, media_type = RESULT_FORMATS.get(job.target.media_type, ("jpg", "image/jpeg"))
    fmt = "jpeg" if extension == "jpg" else extension
    boxes = [[round(float(v)) for v in face.box] for face in result.faces_used]
    with metrics.timed_stage("encode"):
        mark = visible_mark()
        encoded = encode_labelled(result.image if mark is None else mark.apply(result.image), fmt=fmt, job_id=job.id)
        # One claim for the result and its copies (its input hashes cost a query of the uploads).
        claim = result_claim(
            job, extension=extension, engine={"swapper": result.swapper, "enhancer": result.enhancer or ""}
        )
        encoded, provenance = sign_result(encoded, media_type=media_type, claim=claim)
    with metrics.timed_stage("upload"):
        key = store_result(job, data=encoded, media_type=media_type, extension=extension, before=target,
                           unmarked=result.image, face_boxes=boxes, claim=claim)
    with metrics.timed_stage("output_screening"):
        review = moderation_services.screen_output(subject_id=job.id, pixels=result.image)
    height, width = result.image.shape[:2]
    notes = {
        "swapper": result.swapper,
        "enhancer": result.enhancer,
        "faces_swapped": len(result.faces_used),
        "source_photos": len(sources),
        "model_versions": model_versions(),
        "models": models_used(),  # each with its version and licence
        # Billing charges the mode that ran (lifecycle.job_mode_ran), never a dearer one asked for.
        "mode_requested": result.mode_requested,
        "mode_ran": result.mode,
        "mode_steps": list(result.mode_steps),
        "visible_mark": mark is not None,
        # Where the swapped faces are (result pixels): the site opens its before/after on them.
        "face_boxes": boxes,
        # "cached": every input's face analysis came from screening; "computed": none did.
        "face_analysis": analyses.summary(),
    }
    if result.mode_note:
        notes["mode_note"] = result.mode_note
    if result.enhancer_skipped_reason:
        notes["enhancer_skipped"] = result.enhancer_skipped_reason
    return lifecycle.JobOutcome(
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


class _CachedAnalyses:
    """The job's stored face analyses that this pipeline may reuse (face_analysis.JobAnalyses: same
    signature, same pixel size), and storing the ones it had to compute."""

    def __init__(self, job: Job, pipeline: Pipeline, sources: list[np.ndarray], target: np.ndarray) -> None:
        started = time.perf_counter()
        self.pipeline = pipeline
        self.uploads = source_uploads(job)
        self.sources, self.target, self.target_upload = sources, target, job.target
        self.target_mode = target_analysis_mode(
            swap_options_for(job), pipeline.mode_capabilities(), numbered=bool(job.face_sources)
        )
        self.stored = face_analysis.JobAnalyses(job)
        self.cached_sources: list[FaceAnalysis | None] = [
            self.stored.load(upload, image, pipeline=pipeline, mode=SOURCE_ANALYSIS_MODE)
            for upload, image in zip(self.uploads, sources, strict=True)
        ]
        self.cached_target = self.stored.load(job.target, target, pipeline=pipeline, mode=self.target_mode)
        self.cache_ms = (time.perf_counter() - started) * 1000.0

    def source_faces(self) -> list[list[Face] | None]:
        return [None if cached is None else cached.faces for cached in self.cached_sources]

    def target_faces(self) -> list[Face] | None:
        return None if self.cached_target is None else self.cached_target.faces

    def cached_inference_ms(self) -> float:
        cached = [c for c in (*self.cached_sources, self.cached_target) if c is not None]
        return sum(c.inference_ms for c in cached)

    def store_computed(self, identities: list[SourceIdentity], result: SwapResult) -> None:
        """Store what the swap analysed itself (a retry of this job then reuses it)."""
        started = time.perf_counter()
        analyses = [a for identity in identities for a in identity.analyses]
        costs_ms = [c for identity in identities for c in identity.analysis_inference_ms]
        for upload, image, cached, faces, cost_ms in zip(
            self.uploads, self.sources, self.cached_sources, analyses, costs_ms, strict=True
        ):
            if cached is None:
                analysis = FaceAnalysis(faces=faces, inference_ms=cost_ms)
                self.stored.add(upload, image, analysis, pipeline=self.pipeline, mode=SOURCE_ANALYSIS_MODE)
        if self.cached_target is None:
            analysis = FaceAnalysis(faces=result.target_faces, inference_ms=result.target_analysis_inference_ms)
            self.stored.add(self.target_upload, self.target, analysis, pipeline=self.pipeline, mode=self.target_mode)
        self.stored.save()
        self.cache_ms += (time.perf_counter() - started) * 1000.0
        result.timings_ms["analysis_cache"] = self.cache_ms

    def summary(self) -> str:
        hits = [cached is not None for cached in (*self.cached_sources, self.cached_target)]
        return "cached" if all(hits) else "computed" if not any(hits) else "partly cached"
