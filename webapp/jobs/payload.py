"""The job as users see it: one dict shared by the API, the webhooks and the dashboard's JSON."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from billing import selectors as billing_selectors
from webapp.media import storage

from . import readiness, selectors, sharing
from .choices import JobState
from .models import Job
from .states import TERMINAL_STATES


def _iso(value):
    return value.isoformat().replace("+00:00", "Z") if value else None


def result_payload(job: Job) -> dict | None:
    if job.state != JobState.SUCCEEDED or not job.result_visible or not job.result_key:
        return None
    if job.media_deleted_at:
        return {"url": None, "expires_at": None, "media_type": job.result_media_type, "deleted": True}
    expiry_s = settings.S3_PRESIGN_EXPIRY_S
    extension = job.result_key.rsplit(".", 1)[-1]
    return {
        "url": storage.presigned_get(settings.S3_RESULTS_BUCKET, job.result_key, expiry_s=expiry_s,
                                     download_name=f"visage-{job.id}.{extension}"),
        "inline_url": storage.presigned_get(settings.S3_RESULTS_BUCKET, job.result_key, expiry_s=expiry_s),
        "before_url": storage.presigned_get(settings.S3_RESULTS_BUCKET, job.before_key, expiry_s=expiry_s),
        # A small WebP (≤ 480 px, cropped around the faces; a video's poster). Results stored before
        # thumbnails existed have none: the URL then answers 404.
        "thumbnail_url": storage.presigned_get(settings.S3_RESULTS_BUCKET, job.thumbnail_key, expiry_s=expiry_s),
        "expires_at": _iso(timezone.now() + timedelta(seconds=expiry_s)),
        "media_type": job.result_media_type,
        "bytes": job.result_bytes,
        "width": job.processed_width,
        "height": job.processed_height,
        "deleted": False,
        "ai_generated": True,
    }


def share_payload(job: Job, *, absolute) -> dict | None:
    """The owner's active share link: None when there is none or sharing is off."""
    link = sharing.share_link_active(job) if settings.SHARE_LINKS_ENABLED else None
    if link is None:
        return None
    token = sharing.token_for(link.nonce)
    shown = sharing.token_hash(token) == link.token_sha256  # False only after a SECRET_KEY change
    return {
        "url": absolute(sharing.share_link_url_path(token)) if shown else None,
        "expires_at": _iso(link.expires_at),
        "created_at": _iso(link.created_at),
        "views": link.view_count,
    }


def queue_payload(job: Job, standings: Mapping[uuid.UUID, selectors.QueueStanding] | None = None) -> dict | None:
    """A queued job's place in line and rough waits, as the site's "2nd in line · ready in about
    40 s" says them; None in every other state. `standings`: already read for a page of jobs."""
    if job.state != JobState.QUEUED:
        return None
    standing = (selectors.queue_standings([job]) if standings is None else standings).get(job.id)
    if standing is None:
        return None  # it left the queue between the two reads
    return {
        "position": standing.position,
        "start_seconds": standing.start_seconds,
        "eta_seconds": standing.eta_seconds,
    }


def warming_payload(job: Job, known: dict | None = None) -> dict | None:
    """While the workers this job waits for are still starting (a fresh start, a restart): about
    how long until they take it; None once they are, and in every state past waiting.
    `known`: what was read for other jobs of the same page (filled in here)."""
    roles = tuple(readiness.roles_needed(job.state))
    if not roles:
        return None
    if known is not None and roles in known:
        warming = known[roles]
    else:
        warming = readiness.warming_up(list(roles))
        if known is not None:
            known[roles] = warming
    return None if warming is None else {"ready_in_seconds": warming.ready_in_s}


def job_payload(
    job: Job,
    *,
    request=None,
    standings: Mapping[uuid.UUID, selectors.QueueStanding] | None = None,
    warming: dict | None = None,
) -> dict:
    """`standings`: the queue standings of a page of jobs read at once (selectors.queue_standings);
    without them a queued job's own are read. `warming`: warm-up states read for a page of jobs
    (warming_payload)."""

    def absolute(path: str) -> str:
        if request is not None:
            return request.build_absolute_uri(path)
        return settings.PUBLIC_URL + path  # a webhook body: VISAGE_PUBLIC_URL, or the bare path

    queue_seconds = None
    if job.queued_at and job.started_at:
        queue_seconds = round((job.started_at - job.queued_at).total_seconds(), 3)
    result = result_payload(job)
    cost = billing_selectors.job_cost(job_id=job.id)
    return {
        "id": str(job.id),
        "state": job.state,
        "terminal": job.state in TERMINAL_STATES,
        "progress": job.progress,
        "queue": queue_payload(job, standings),
        "warming_up": warming_payload(job, warming),
        "favourite": job.favourite,
        "created_at": _iso(job.created_at),
        "queued_at": _iso(job.queued_at),
        "started_at": _iso(job.started_at),
        "completed_at": _iso(job.completed_at),
        "options": {
            "mode": job.mode,
            "resolution": job.resolution,
            "faces": job.faces,
            "face_index": job.face_index,
            "reference_face_index": job.reference_face_index,
            "face_sources": job.face_sources or None,
            "webhook_url": job.webhook_url or None,
        },
        "source": {
            "media_type": job.source.media_type, "width": job.source.width, "height": job.source.height,
            "photos": 1 + len(job.extra_sources.all()),
        },
        "target": {
            "media_type": job.target.media_type, "kind": job.target.kind, "width": job.target.width,
            "height": job.target.height, "frames": job.target.frames, "fps": job.target.fps,
            "duration_seconds": job.target.duration_seconds, "has_audio": job.target.has_audio,
            # The file name it was uploaded with; None for jobs made before names were kept.
            "name": job.target.original_name or None,
        },
        "result_url": result["url"] if result else None,
        "result": result,
        # Workers store messages in English; the fixed ones are in the catalogue (gettext_noop where they
        # are written), so they are read in the request's language.
        "error": {"code": job.error_code, "message": _(job.error_message) if job.error_message else ""}
        if job.error_code
        else None,
        "moderation": {
            "state": _moderation_state(job),
            "message": (_(job.error_message) if job.error_message else job.error_message)
            if job.state == JobState.REVIEW
            else None,
        },
        "metrics": {
            "queue_seconds": queue_seconds,
            "gpu_seconds": float(job.gpu_seconds) if job.gpu_seconds is not None else None,
            "wall_seconds": float(job.wall_seconds) if job.wall_seconds is not None else None,
            "stage_ms": job.stage_ms or None,
            "attempts": job.attempts,
        },
        "engine": job.engine_notes or None,
        # C2PA Content Credentials of the stored result, as read back after signing.
        "provenance": job.provenance or None,
        "consent": {"given_at": _iso(job.consent_at), "version": job.consent_version, "channel": job.consent_channel}
        if job.consent_at
        else None,
        "quote": job.quote or None,
        "cost": cost,
        # One plain sentence on the money, from the ledger, right in every state.
        "credits": cost["sentence"] if cost else _("Nothing was charged for this swap."),
        "media_deleted": job.media_deleted_at is not None,
        "share": share_payload(job, absolute=absolute),
        "urls": {
            "self": absolute(reverse("api-job-detail", args=[job.id])),
            "cancel": absolute(reverse("api-job-cancel", args=[job.id])),
            "share": absolute(reverse("api-job-share", args=[job.id])),
            "page": absolute(reverse("job-detail", args=[job.id])),
        },
    }


# --- the representation cache -------------------------------------------------------------------
# A body is stored under the ETag it was built for (which names the job's version and, for
# presigned URLs, their half-expiry period), so a transition needs no invalidation: it changes the
# ETag, and a reader asks for the new one. Old bodies expire by themselves.
PAYLOAD_CACHE_S = 300


def _payload_key(job_id, etag: str, origin: str) -> str:
    # Per language too: the body's sentences (`credits`, `cost.sentence`) are in the request's language.
    version = f"{origin} {etag} {get_language()}"
    return f"visage:job-payload:{job_id}:{hashlib.sha256(version.encode()).hexdigest()[:32]}"


def cached_job_payload(*, job_id, etag: str, origin: str) -> dict | None:
    """The body built for this ETag at this origin (scheme://host: the URLs are absolute), or None."""
    return cache.get(_payload_key(job_id, etag, origin))


def cache_job_payload(*, job_id, etag: str, origin: str, body: dict) -> None:
    if body.get("queue") is not None or body.get("warming_up") is not None:
        return  # a queued job's place in line, a warm-up's wait, move while its ETag stays: read anew
    # Never longer than the presigned URLs' half-lifetime: past it the ETag moves on anyway.
    ttl_s = min(PAYLOAD_CACHE_S, max(1, settings.S3_PRESIGN_EXPIRY_S // 2))
    cache.set(_payload_key(job_id, etag, origin), body, ttl_s)


def _moderation_state(job: Job) -> str:
    if job.state in (JobState.CREATED, JobState.SCREENING):
        return "pending"
    if job.state == JobState.REVIEW:
        return "in_review"
    if job.state == JobState.REJECTED:
        return "rejected"
    return "passed" if job.queued_at else "not_screened"  # ended before screening passed it (canceled, failed)
