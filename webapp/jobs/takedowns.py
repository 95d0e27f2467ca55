"""Takedown reports: a person who finds a result of themselves reports it at /report.

The report names a result (its link, page or download URL: any text with the job id in it) and/or
carries the file itself. A file's C2PA Content Credentials name the job it came from (the content
id), so a re-uploaded download finds its job even without a link. The reported face is embedded
by moderation (embedding only) so a moderator can protect it in one action; taking the result down
deletes the stored result (the job row stays, marked media-deleted).
"""

from __future__ import annotations

import hashlib
import logging
import re
import tempfile
import uuid
from pathlib import Path

import cv2
from django.conf import settings
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_noop

from moderation import takedowns as moderation_takedowns
from moderation.models import TakedownReport
from swap.video import io as video_io
from webapp.media import provenance, storage
from webapp.media.validation import sniff_media_type

from . import events, sharing
from .models import Job
from .services import lifecycle, stored_files
from .states import CANCELABLE_STATES, TERMINAL_STATES

logger = logging.getLogger(__name__)

UUID_PATTERN = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE)


def job_for_link(link: str) -> Job | None:
    shared = sharing.job_for_share_url(link)  # a share link names no job id
    if shared is not None:
        return shared
    for match in UUID_PATTERN.findall(link or ""):
        try:
            job = Job.objects.filter(id=uuid.UUID(match)).first()
        except ValueError:
            continue
        if job is not None:
            return job
    return None


def takedown_report_submit(
    *, reporter_name: str, reporter_email: str, relation: str, details: str, link: str, file_data: bytes | None
) -> TakedownReport:
    """Resolve what was reported to a job, find a face to embed, and queue the report for moderators."""
    job = job_for_link(link)
    file_summary: dict = {}
    media_type = (sniff_media_type(file_data[:64]) or "") if file_data else ""
    if file_data and media_type in provenance.SIGNABLE_TYPES:
        report = provenance.read(file_data, media_type=media_type)
        file_summary = report.summary()
        if job is None and file_summary.get("content_id"):
            job = job_for_link(file_summary["content_id"])
    photo = _face_image(file_data, media_type) if file_data else None
    if photo is None and job is not None:
        photo = _result_face_image(job)
    return moderation_takedowns.takedown_report_create(
        reporter_name=reporter_name,
        reporter_email=reporter_email,
        relation=relation,
        details=details,
        link=link,
        subject_id=job.id if job else None,
        photo=photo,
        file_sha256=_sha256(file_data) if file_data else "",
        file_provenance=file_summary,
    )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _face_image(data: bytes, media_type: str) -> bytes | None:
    """An image to embed the reported face from: the file itself, or a frame of a video."""
    if media_type.startswith("image/"):
        return data
    if media_type == "video/mp4":
        with tempfile.TemporaryDirectory(prefix="visage-report-") as tmp:
            path = Path(tmp) / "reported.mp4"
            path.write_bytes(data)
            try:
                frames = video_io.sample_frames(path)
            except Exception:  # an unreadable video still makes a report, just without a face
                logger.info("could not read a frame of a reported video", exc_info=True)
                return None
            if frames:
                return cv2.imencode(".png", frames[len(frames) // 2][1])[1].tobytes()
    return None


def _result_face_image(job: Job) -> bytes | None:
    if not job.result_key or job.media_deleted_at is not None:
        return None
    try:
        data = storage.get_bytes(settings.S3_RESULTS_BUCKET, job.result_key)
    except storage.StorageError:
        return None
    return _face_image(data, job.result_media_type)


TAKEN_DOWN_LABEL = gettext_noop("Taken down")
TAKEN_DOWN_MESSAGE = gettext_noop(
    "Someone reported that this result shows them without their agreement, and our moderators removed it. "
    "It can no longer be viewed, downloaded or shared."
)


def taken_down_job_ids(job_ids) -> set[uuid.UUID]:
    """Which of these jobs had their result taken down after a report (so their owners are told why
    it is gone, rather than that it expired)."""
    return set(
        TakedownReport.objects.filter(subject_id__in=list(job_ids), result_taken_down=True).values_list(
            "subject_id", flat=True
        )
    )


def job_take_down(*, job_id: uuid.UUID) -> bool:
    """Delete a reported job's stored result; the job stays, saying its media was deleted. A job
    that has not ended is ended first, unbilled (rejected): taken down while queued or running, it
    went on, stored its result and copies (which nothing deleted: the retention purge skips media
    already deleted) and charged its owner. Its GPU step now finds it ended and discards what it made."""
    job = Job.objects.filter(id=job_id).first()
    if job is None:
        return False
    if job.state not in TERMINAL_STATES:
        lifecycle.job_reject(
            job_id, from_states=CANCELABLE_STATES, message=TAKEN_DOWN_MESSAGE, code="content_rejected"
        )
        job.refresh_from_db()
    sharing.share_links_revoke(job=job)
    if job.result_key:
        stored_files.result_discard(result_key=job.result_key)
    moved = Job.objects.filter(id=job_id).update(
        result_visible=False, media_deleted_at=job.media_deleted_at or timezone.now(), version=F("version") + 1
    )
    if moved:
        events.job_changed(job_id)  # its 304s and live pages must not keep showing the result
    return bool(moved)
