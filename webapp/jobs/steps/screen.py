"""The moderation step of a job: runs on the CPU `moderation` queue before any GPU time is spent."""

from __future__ import annotations

import logging
import uuid

from django.conf import settings

from moderation import services as moderation_services
from webapp.media import storage
from webapp.media.choices import MediaKind

from .. import services
from ..choices import JobState
from ..models import Job

logger = logging.getLogger(__name__)


def run(job_id: uuid.UUID) -> None:
    if not services.job_screen_start(job_id):
        logger.info("job %s is not waiting for screening; nothing to do", job_id)
        return
    job = Job.objects.select_related("source", "target").get(id=job_id)
    try:
        source = storage.get_bytes(settings.S3_UPLOADS_BUCKET, job.source.s3_key)
        extra_sources = [
            storage.get_bytes(settings.S3_UPLOADS_BUCKET, upload.s3_key)
            for upload in job.extra_sources.order_by("created_at")
        ]
        target = storage.get_bytes(settings.S3_UPLOADS_BUCKET, job.target.s3_key)
    except storage.ObjectMissing:
        services.job_fail(
            job_id,
            code="upload_missing",
            message="The uploaded files are no longer available.",
            from_states=[JobState.SCREENING],
        )
        return
    if job.target.kind == MediaKind.VIDEO:
        outcome = moderation_services.screen_video_inputs(
            subject_id=job_id, source=source, video=target, extra_sources=extra_sources
        )
    else:
        outcome = moderation_services.screen_inputs(
            subject_id=job_id, source=source, target=target, extra_sources=extra_sources
        )
    if outcome.decision == "allow":
        services.job_enqueue_gpu(job_id, from_states=[JobState.SCREENING])
    elif outcome.decision == "review":
        services.job_hold_for_review(job_id, from_states=[JobState.SCREENING], message=outcome.message)
    else:
        services.job_reject(job_id, from_states=[JobState.SCREENING], message=outcome.message, code=outcome.code)
