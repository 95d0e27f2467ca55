"""The moderation step of a job: runs on the CPU `moderation` queue before any GPU time is spent."""

from __future__ import annotations

import logging
import uuid

import numpy as np
from django.conf import settings
from django.utils.translation import gettext_noop

from moderation import identities
from moderation import services as moderation_services
from swap.errors import FaceIndexOutOfRange
from swap.pipeline import LARGEST_FACE_MODE, SOURCE_ANALYSIS_MODE, swaps_largest_only
from swap.selection import needs_embeddings
from swap.types import Face
from swap.video.io import InvalidVideo
from webapp.media import storage
from webapp.media.choices import MediaKind
from webapp.telemetry import metrics

from .. import face_analysis
from ..choices import TERMINAL_STATES, JobState
from ..models import Job, Upload
from ..services import lifecycle
from ..states import current
from .common import held_source, job_for_step, source_uploads, swap_options_for, target_photo

logger = logging.getLogger(__name__)


def run(job_id: uuid.UUID) -> None:
    start = lifecycle.job_screen_start(job_id)
    if not start:
        logger.info("job %s is not waiting for screening; nothing to do", job_id)
        return
    with metrics.timed_stage("screening"):
        _screen(job_id, first=start == "first")


def _screen(job_id: uuid.UUID, *, first: bool) -> None:
    job = job_for_step(job_id)
    sources = source_uploads(job)
    try:
        source, *extra_sources = [_source_photo(upload) for upload in sources]
        target = storage.get_bytes(settings.S3_UPLOADS_BUCKET, job.target.s3_key)
    except storage.ObjectMissing:
        lifecycle.job_fail(
            job_id,
            code="upload_missing",
            message=gettext_noop("The uploaded files are no longer available."),
            from_states=[JobState.SCREENING],
        )
        return
    target_faces: list[int] = []  # how many faces the target analysis found (photo targets)
    if job.target.kind == MediaKind.VIDEO:
        try:
            outcome = moderation_services.screen_video_inputs(
                subject_id=job_id, source=source, video=target, extra_sources=extra_sources
            )
        except InvalidVideo as exc:
            # The file breaks partway (upload only demuxes it; decoding it all there would cost a
            # worker's time per submit). Damaged bytes stay damaged: retrying cannot help.
            lifecycle.job_fail(
                job_id,
                code="corrupt_video",
                message=f"The target video is damaged and can't be processed: {exc} "
                "Export it again from your phone or editor and submit the new file.",
                from_states=[JobState.SCREENING],
            )
            return
    else:
        # A first screening is the first to analyse this job: nothing stored to read (one S3 GET
        # that could only miss). A retry or a re-screen reads what an earlier try stored.
        analyses = face_analysis.JobAnalyses(job, nothing_stored=first)
        outcome = moderation_services.screen_inputs(
            subject_id=job_id,
            source=source,
            target=target,
            extra_sources=extra_sources,
            faces_for=_analysed_once(job, [*sources, job.target], target_faces, analyses, target),
        )
        if outcome.decision != "reject":  # stored before the job can reach a GPU worker
            analyses.save()
            now = current(job_id)
            if now is None or now[0] in TERMINAL_STATES:
                # Deleted (its owner's account too) or canceled while it was screened: the faces
                # analysed must not outlive it, not even until the orphan sweep.
                storage.delete(settings.S3_UPLOADS_BUCKET, analyses.key)
                return
    if outcome.decision == "allow" and (missing := _missing_face(job, target_faces)) is not None:
        # A face picked by number that the target does not have: said now, before any GPU time.
        lifecycle.job_fail(job_id, code=missing.code, message=str(missing), from_states=[JobState.SCREENING])
    elif outcome.decision == "allow":
        lifecycle.job_enqueue_gpu(job_id, from_states=[JobState.SCREENING])
    elif outcome.decision == "review":
        lifecycle.job_hold_for_review(job_id, from_states=[JobState.SCREENING], message=outcome.message)
    else:
        lifecycle.job_reject(job_id, from_states=[JobState.SCREENING], message=outcome.message, code=outcome.code)


def _source_photo(upload: Upload) -> bytes | moderation_services.DecodedPhoto:
    """A source photo this process holds decoded (a selfie swapped into one target after another:
    common.held_source), else its stored bytes."""
    held = held_source(upload)
    if held is not None:
        return moderation_services.DecodedPhoto(held, upload.sha256)
    return storage.get_bytes(settings.S3_UPLOADS_BUCKET, upload.s3_key)


def _missing_face(job: Job, target_faces: list[int]) -> FaceIndexOutOfRange | None:
    """The first face number the job asks for (face_index, face_sources) that the analysed target
    lacks; None when all exist or the target was not analysed here."""
    if not target_faces:
        return None
    found = target_faces[-1]
    picked = [("face_index", job.face_index)] if job.face_index is not None else []
    picked += [("face", item["face"]) for item in job.face_sources or []]
    for what, index in picked:
        if index >= found:
            return FaceIndexOutOfRange(index, found, what=what)
    return None


def _analysed_once(
    job: Job, uploads: list[Upload], target_faces: list[int], analyses: face_analysis.JobAnalyses, target: bytes
):
    """Moderation's face checks on analyses that are kept for the GPU step (in `analyses`): each
    photo analysed once, the target at the job's resolution, with moderation's own pipeline.

    The target is analysed in standard mode whatever the job's mode: fast skips the rotated
    retries and searches a 640 px copy, and moderation must not miss a face it finds today. A
    fast job's GPU step therefore finds no analysis under its own key and makes its own. A job
    that swaps only the target's largest face analyses it as the GPU step does (LARGEST_FACE_MODE):
    a smaller face beside it is neither swapped nor checked. The target is the GPU step's picture
    (common.target_photo): moderation's decoded whole picture scaled down, or, where libjpeg can
    decode the stored JPEG reduced to cover the job's resolution, that decode (a 12 MP photo for
    1080p: ~25 instead of ~70 ms here)."""
    options = swap_options_for(job)
    target_mode = LARGEST_FACE_MODE if swaps_largest_only(options, numbered=bool(job.face_sources)) else "standard"

    def faces_for(position: int, pixels: np.ndarray, embed: bool) -> list[Face]:
        analyser = identities.get_analyser()
        pipeline, kind = analyser.pipeline, analyser.embedding_kind
        upload = uploads[position]
        is_target = position == len(uploads) - 1
        image = target_photo(target, job.resolution, decoded=pixels) if is_target else pixels
        mode = target_mode if is_target else SOURCE_ANALYSIS_MODE
        cached = analyses.load(upload, image, pipeline=pipeline, mode=mode)
        if cached is not None and (not embed or face_analysis.fully_embedded(cached.faces, kind)):
            if is_target:
                target_faces.append(len(cached.faces))
            return cached.faces  # a re-screen (the sweeper) or an analysis made earlier
        analysis = face_analysis.analyse_for_job(
            analyser,
            image,
            mode=mode,
            role="target" if is_target else "source",
            target_embeddings=needs_embeddings(options),
            every_face=embed,
        )
        analyses.add(upload, image, analysis, pipeline=pipeline, mode=mode)
        if is_target:
            target_faces.append(len(analysis.faces))
        return analysis.faces

    return faces_for
