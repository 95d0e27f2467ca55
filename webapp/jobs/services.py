"""Writes for jobs and uploads. Every state change is one guarded UPDATE (states.transition).

Credits: hold at submit, capture at success, release on every other exit (billing enforces once).
Work is enqueued only through `dispatch`, after the transaction that made it due has committed.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from billing import services as billing_services
from webapp.media import storage
from webapp.media.choices import MediaKind
from webapp.media.validation import MediaInfo, inspect_upload
from webapp.telemetry import metrics

from . import dispatch, events, observe, sharing
from .choices import JobState, UploadRole
from .errors import ConsentRequired, IdempotencyKeyMismatch, InvalidOption, JobNotCancelable, OriginalsDeleted
from .models import Job, Upload, result_keys
from .states import BEFORE_RUNNING, CANCELABLE_STATES, TERMINAL_STATES, current, transition

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobOptions:
    mode: str = "standard"
    resolution: str = "720p"
    faces: str = "one"
    face_index: int | None = None
    reference_face_index: int | None = None
    webhook_url: str = ""
    face_sources: tuple[tuple[int, int], ...] = ()  # (target face index, source photo index) pairs


@dataclass(frozen=True)
class Consent:
    """The uploader's statement that they have the right to use the source face(s), as given."""

    given: bool
    channel: str  # "api" or "site"
    version: str = ""  # of the wording shown; the configured one when empty
    text: str = ""


def consent_required_message() -> str:
    return (
        "Confirm that you have the right to use the face(s) you upload "
        f"(send consent=true; it means: “{settings.CONSENT_TEXT}”)."
    )


def request_fingerprint(
    *, source: MediaInfo, target: MediaInfo, options: JobOptions, extra_sources: Sequence[MediaInfo] = ()
) -> str:
    """What makes two create requests 'the same' for Idempotency-Key purposes."""
    parts = [
        source.sha256,
        target.sha256,
        *(extra.sha256 for extra in extra_sources),
        *(f"{k}={v}" for k, v in sorted(options.__dict__.items())),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# --- submit ----------------------------------------------------------------------------------------


def job_submit(
    *, user, sources: Sequence, target, options: JobOptions, consent: Consent | None, idempotency_key: str = ""
) -> tuple[Job, bool]:
    """A create request from the API or the site: check consent and the uploaded files, then create.

    `sources`: the uploaded source photos in order (several photos of one face, or one photo per
    person with `options.face_sources`); `target`: the uploaded photo or video (None when missing).
    Raises ConsentRequired (nothing is stored without consent), UploadRejected or InvalidOption
    naming the field at fault.
    """
    if consent is None or not consent.given:
        raise ConsentRequired(consent_required_message(), field="consent")
    sources = list(sources) or [None]
    if len(sources) > settings.MAX_SOURCE_PHOTOS:
        raise InvalidOption(
            f"Send at most {settings.MAX_SOURCE_PHOTOS} photos of the face, not {len(sources)}.", field="source"
        )
    if options.face_sources:
        highest = max(source for _, source in options.face_sources)
        if highest >= len(sources):
            raise InvalidOption(
                f"It names source photo {highest}, but {len(sources)} were sent (numbered from 0 in upload order).",
                field="face_sources",
            )
    source, *extra_sources = [inspect_upload(f, field="source", allow_video=False) for f in sources]
    target_info = inspect_upload(target, field="target", allow_video=settings.VIDEO_ENABLED)
    if options.face_sources and target_info.kind != MediaKind.IMAGE:
        raise InvalidOption("face_sources works with photo targets only.", field="face_sources")
    return job_create(
        user=user,
        source=source,
        target=target_info,
        options=options,
        idempotency_key=idempotency_key,
        extra_sources=extra_sources,
        consent=consent,
    )


def job_create(
    *,
    user,
    source: MediaInfo,
    target: MediaInfo,
    options: JobOptions,
    idempotency_key: str = "",
    extra_sources: Sequence[MediaInfo] = (),
    consent: Consent | None = None,
) -> tuple[Job, bool]:
    """Store the originals, record the job (with the uploader's consent), hold its quoted credits,
    then screen it.

    `extra_sources`: more photos (of the same face, or of other people with face_sources).
    Returns (job, created). A repeated Idempotency-Key with the same request returns the first job.
    """
    fingerprint = request_fingerprint(
        source=source, target=target, options=options, extra_sources=extra_sources
    )
    if idempotency_key:
        existing = Job.objects.filter(owner=user, idempotency_key=idempotency_key).first()
        if existing is not None:
            return _replay(existing, fingerprint), False

    quote = job_quote(user=user, target=target, mode=options.mode, resolution=options.resolution)
    job_id = uuid.uuid4()
    files = {"source": source, "target": target}
    files.update({f"source-{i}": extra for i, extra in enumerate(extra_sources, 2)})
    keys = {name: f"{user.pk}/{job_id}/{name}" for name in files}
    try:
        for name, info in files.items():
            storage.put_bytes(settings.S3_UPLOADS_BUCKET, keys[name], info.data, info.media_type)
        with transaction.atomic():
            job = _record_job(
                job_id, user=user, files=files, keys=keys, options=options, quote=quote,
                idempotency_key=idempotency_key, fingerprint=fingerprint, consent=consent,
            )
            billing_services.hold_place(user=user, job_id=job_id, quote=quote)
            events.job_changed(job_id)  # the dashboard learns of jobs made elsewhere (the API, a tab)
            # robust: Redis down must not undo a committed job; the sweeper enqueues it later.
            transaction.on_commit(lambda: dispatch.enqueue_screening(job_id), robust=True)
    except IntegrityError:
        # Two requests with one Idempotency-Key raced; the other one won.
        _delete_objects(keys.values())
        existing = Job.objects.filter(owner=user, idempotency_key=idempotency_key).first()
        if idempotency_key and existing is not None:
            return _replay(existing, fingerprint), False
        raise
    except BaseException:
        _delete_objects(keys.values())
        raise
    return job, True


def job_quote(*, user, target: MediaInfo, mode: str, resolution: str):
    """The price of a job on this target: the one function behind the upload page's estimate,
    POST /api/v1/quotes and the job's stored quote, from the same inputs (the target's own size,
    the probed frame count), so all three agree to the cent."""
    return billing_services.quote_job(
        user=user,
        width=target.width,
        height=target.height,
        frames=target.frames,
        mode=mode,
        resolution=resolution,
        kind=target.kind,
    )


def _record_job(
    job_id: uuid.UUID, *, user, files: dict[str, MediaInfo], keys: dict[str, str], options: JobOptions,
    quote, idempotency_key: str, fingerprint: str, consent: Consent | None = None,
) -> Job:
    uploads = {
        name: Upload.objects.create(
            owner=user,
            role=UploadRole.TARGET if name == "target" else UploadRole.SOURCE,
            s3_key=keys[name],
            sha256=info.sha256,
            media_type=info.media_type,
            kind=info.kind,
            width=info.width,
            height=info.height,
            frames=info.frames,
            fps=info.fps,
            duration_seconds=info.duration_seconds,
            has_audio=info.has_audio,
            size_bytes=info.size_bytes,
            original_name=info.name,
        )
        for name, info in files.items()
    }
    job = Job.objects.create(
        id=job_id,
        owner=user,
        source=uploads["source"],
        target=uploads["target"],
        mode=options.mode,
        resolution=options.resolution,
        faces=options.faces,
        face_index=options.face_index,
        reference_face_index=options.reference_face_index,
        face_sources=[{"face": face, "source": source} for face, source in options.face_sources],
        webhook_url=options.webhook_url,
        queue=quote.queue,
        quote=quote.as_dict(),
        idempotency_key=idempotency_key,
        request_hash=fingerprint,
        **_consent_fields(consent),
    )
    job.extra_sources.set([upload for name, upload in uploads.items() if name.startswith("source-")])
    return job


def _consent_fields(consent: Consent | None) -> dict:
    if consent is None or not consent.given:
        return {}
    return {
        "consent_at": timezone.now(),
        "consent_version": consent.version or settings.CONSENT_VERSION,
        "consent_text": consent.text or settings.CONSENT_TEXT,
        "consent_channel": consent.channel,
    }


def _replay(existing: Job, fingerprint: str) -> Job:
    if existing.request_hash != fingerprint:
        raise IdempotencyKeyMismatch(
            "This Idempotency-Key was already used with a different request; use a new key for a new job."
        )
    return existing


def _delete_objects(keys: Iterable[str]) -> None:
    for key in keys:
        try:
            storage.delete(settings.S3_UPLOADS_BUCKET, key)
        except storage.StorageError:
            logger.exception("could not delete orphaned upload %s", key)


# --- ending a job ------------------------------------------------------------------------------------


def _purge_uploads(job: Job) -> None:
    """Delete the job's originals and any intermediate parts from S3 (idempotent) and record when."""
    for key in storage.list_keys(settings.S3_UPLOADS_BUCKET, prefix=f"{job.owner_id}/{job.id}/"):
        storage.delete(settings.S3_UPLOADS_BUCKET, key)
    for upload in (job.source, job.target, *job.extra_sources.all()):
        if upload.deleted_at is None:
            storage.delete(settings.S3_UPLOADS_BUCKET, upload.s3_key)
            Upload.objects.filter(id=upload.id, deleted_at__isnull=True).update(deleted_at=timezone.now())


def _delete_result(job: Job) -> None:
    if job.result_key:
        result_discard(result_key=job.result_key)


def _end_without_charge(
    job_id: uuid.UUID, *, from_states: Iterable[str], to_state: str, code: str, message: str
) -> bool:
    """Any exit but success: move the job, release its hold, delete its uploads."""
    with transaction.atomic():
        moved = transition(
            job_id,
            from_states=from_states,
            to_state=to_state,
            error_code=code,
            error_message=message,
            completed_at=timezone.now(),
        )
        if moved:
            billing_services.hold_release(job_id=job_id, reason=f"job {to_state}: {code}")
    if moved:
        observe.job_ended(job_id)
        job = Job.objects.select_related("source", "target").get(id=job_id)
        if job.result_key:
            _delete_result(job)
        _purge_uploads(job)
        dispatch.enqueue_webhook(job_id)
    return moved


def job_fail(job_id: uuid.UUID, *, code: str, message: str, from_states: Iterable[str] | None = None) -> bool:
    states = from_states or [*BEFORE_RUNNING, JobState.RUNNING]
    return _end_without_charge(
        job_id, from_states=states, to_state=JobState.FAILED, code=code, message=message
    )


# --- screening and review ----------------------------------------------------------------------------


def job_screen_start(job_id: uuid.UUID) -> bool:
    """Also from `screening`: RQ retries a screening that hit a transient fault (the verdict is
    applied by guarded transitions, so a duplicate screening cannot move the job twice)."""
    return (
        transition(job_id, from_states=[JobState.CREATED], to_state=JobState.SCREENING)
        or Job.objects.filter(id=job_id, state=JobState.SCREENING).exists()
    )


def job_enqueue_gpu(job_id: uuid.UUID, *, from_states: Iterable[str]) -> bool:
    """Content passed moderation (or a dead worker's job is retried): queue the GPU run on the
    queue the owner's plan allows."""
    with transaction.atomic():
        moved = transition(job_id, from_states=from_states, to_state=JobState.QUEUED, queued_at=timezone.now())
        if moved:
            queue_name, attempts = Job.objects.values_list("queue", "attempts").get(id=job_id)
            transaction.on_commit(
                lambda: dispatch.enqueue_gpu(job_id, queue_name, attempt=attempts + 1), robust=True
            )
    return moved


def job_hold_for_review(job_id: uuid.UUID, *, from_states: Iterable[str], message: str) -> bool:
    return transition(job_id, from_states=from_states, to_state=JobState.REVIEW, error_message=message)


def job_reject(
    job_id: uuid.UUID, *, from_states: Iterable[str], message: str, code: str = "content_rejected"
) -> bool:
    return _end_without_charge(
        job_id, from_states=from_states, to_state=JobState.REJECTED, code=code, message=message
    )


def job_review_approve(job_id: uuid.UUID) -> bool:
    """A moderator approved a job waiting in review: inputs go to the GPU; a held result is published."""
    job = Job.objects.get(id=job_id)
    if job.result_key:
        return _succeed_after_review(job)
    return job_enqueue_gpu(job_id, from_states=[JobState.REVIEW])


def job_review_reject(job_id: uuid.UUID, *, message: str) -> bool:
    return job_reject(job_id, from_states=[JobState.REVIEW], message=message)


# --- running -------------------------------------------------------------------------------------


def job_start(job_id: uuid.UUID) -> bool:
    now = timezone.now()
    return transition(
        job_id,
        from_states=[JobState.QUEUED],
        to_state=JobState.RUNNING,
        started_at=now,
        heartbeat_at=now,
        attempts=F("attempts") + 1,
        progress=5,
    )


def job_progress(job_id: uuid.UUID, progress: int) -> None:
    progress = max(0, min(99, progress))
    moved = (
        Job.objects.filter(id=job_id, state=JobState.RUNNING)
        .exclude(progress=progress)
        .update(progress=progress, heartbeat_at=timezone.now(), version=F("version") + 1)
    )
    if moved:
        events.job_changed(job_id)
    else:  # the same figure again: only the heartbeat, no new version or event
        job_heartbeat(job_id)


def job_heartbeat(job_id: uuid.UUID) -> None:
    Job.objects.filter(id=job_id, state=JobState.RUNNING).update(heartbeat_at=timezone.now())


def job_requeue_after_transient_fault(job_id: uuid.UUID) -> bool:
    """S3/Redis hiccup: put the job back so RQ's retry (with backoff) can run it again."""
    return transition(job_id, from_states=[JobState.RUNNING], to_state=JobState.QUEUED, progress=0)


@dataclass(frozen=True)
class JobOutcome:
    """What a finished GPU run produced: the stored result and the figures billing charges for."""

    result_key: str
    result_media_type: str
    result_bytes: int
    frames: int
    width: int
    height: int
    gpu_seconds: float
    wall_seconds: float
    stage_ms: dict
    engine_notes: dict
    needs_review: bool = False
    review_message: str = ""
    provenance: dict = field(default_factory=dict)  # what the signed result's C2PA manifest says


def job_succeed(job_id: uuid.UUID, outcome: JobOutcome) -> bool:
    """Record the result and capture the charge in one transaction; or hold the result for review.

    False when the job is no longer running (canceled meanwhile): the stored result is deleted.
    """
    metrics.observe_engine_stages(outcome.stage_ms)
    moved = _record_outcome(job_id, outcome)
    if not moved:
        result_discard(result_key=outcome.result_key)
    return moved


def result_discard(*, result_key: str) -> None:
    """Delete a stored result and everything stored beside it (models.result_keys): a result no job
    will show (canceled, superseded by a newer attempt), deleted, expired or taken down."""
    for key in result_keys(result_key):
        storage.delete(settings.S3_RESULTS_BUCKET, key)


def _record_outcome(job_id: uuid.UUID, outcome: JobOutcome) -> bool:
    fields = dict(
        result_key=outcome.result_key,
        result_media_type=outcome.result_media_type,
        result_bytes=outcome.result_bytes,
        frames_processed=outcome.frames,
        processed_width=outcome.width,
        processed_height=outcome.height,
        gpu_seconds=Decimal(str(round(outcome.gpu_seconds, 4))),
        wall_seconds=Decimal(str(round(outcome.wall_seconds, 4))),
        stage_ms=outcome.stage_ms,
        engine_notes=outcome.engine_notes,
        provenance=outcome.provenance,
    )
    if outcome.needs_review:
        moved = transition(
            job_id,
            from_states=[JobState.RUNNING],
            to_state=JobState.REVIEW,
            progress=100,
            error_message=outcome.review_message,
            **fields,
        )
        if moved:
            _purge_uploads(Job.objects.select_related("source", "target").get(id=job_id))
        return moved
    with transaction.atomic():
        moved = transition(
            job_id,
            from_states=[JobState.RUNNING],
            to_state=JobState.SUCCEEDED,
            progress=100,
            result_visible=True,
            completed_at=timezone.now(),
            **fields,
        )
        if moved:
            _capture(Job.objects.get(id=job_id))
    if moved:
        observe.job_ended(job_id)
        _purge_uploads(Job.objects.select_related("source", "target").get(id=job_id))
        dispatch.enqueue_webhook(job_id)
    return moved


def mode_that_ran(job: Job) -> str:
    """The mode the engine actually ran (billing prices that one, never a dearer one asked for):
    the engine's own report when it gives one, else what the job was quoted as (the mode it runs as
    on this install), with hq without an enhancer counted as standard."""
    notes = job.engine_notes or {}
    for key in ("mode_ran", "mode"):
        reported = notes.get(key)
        if isinstance(reported, str) and reported in ("fast", "standard", "hq"):
            return reported
    quoted = (job.quote or {}).get("mode") or job.mode
    if quoted == "hq" and "enhancer" in notes and not notes.get("enhancer"):
        return "standard"
    return quoted


def _capture(job: Job) -> None:
    charge = billing_services.hold_capture(
        job_id=job.id,
        usage=billing_services.Usage(
            frames=job.frames_processed or 1,
            width=job.processed_width or 0,
            height=job.processed_height or 0,
            mode=mode_that_ran(job),
            mode_requested=job.mode,
            kind=job.target.kind,
            resolution=job.resolution,
            gpu_seconds=job.gpu_seconds or Decimal("0"),
            wall_seconds=job.wall_seconds or Decimal("0"),
            stage_seconds={k: v / 1000 for k, v in job.stage_ms.items()},
        ),
    )
    Job.objects.filter(id=job.id).update(cost=charge.amount)
    transaction.on_commit(lambda: observe.credits_captured(charge))


def _succeed_after_review(job: Job) -> bool:
    with transaction.atomic():
        moved = transition(
            job.id,
            from_states=[JobState.REVIEW],
            to_state=JobState.SUCCEEDED,
            result_visible=True,
            error_message="",
            completed_at=timezone.now(),
        )
        if moved:
            _capture(job)
    if moved:
        observe.job_ended(job.id)
        dispatch.enqueue_webhook(job.id)
    return moved


# --- user actions --------------------------------------------------------------------------------


def job_cancel(*, job: Job) -> Job:
    """Cancel a job that has not ended. Safe against a concurrent cancel or delete: only one caller
    moves the job; the others see where it ended up."""
    if job.state in TERMINAL_STATES:
        raise JobNotCancelable(f"The job is already {job.state} and cannot be canceled.")
    moved = _end_without_charge(
        job.id,
        from_states=CANCELABLE_STATES,
        to_state=JobState.CANCELED,
        code="canceled",
        message="Canceled by the user.",
    )
    now = current(job.id)
    if moved:
        dispatch.cancel_queued(job.id, attempts=now[1] if now else job.attempts)
    if now is None or now[0] != JobState.CANCELED:
        where = f"already {now[0]}" if now else "already deleted"
        raise JobNotCancelable(f"The job is {where} and cannot be canceled.")
    # One read of the job and its uploads: a concurrent delete may remove them any moment now.
    canceled = Job.objects.select_related("source", "target").filter(id=job.id).first()
    if canceled is None:
        raise JobNotCancelable("The job is already deleted and cannot be canceled.")
    return canceled


def job_delete(*, job: Job) -> None:
    """Cancel if still going, delete every stored object, then the rows (idempotent: a concurrent
    delete of the same job finds nothing left to do)."""
    if job.state not in TERMINAL_STATES:
        try:
            job_cancel(job=job)
        except JobNotCancelable:
            pass  # it ended (or was deleted) meanwhile; delete it all the same
    job = Job.objects.select_related("source", "target").filter(id=job.id).first()
    if job is None:
        return
    sharing.share_links_revoke(job=job)  # its public page stops at once (the rows go with the job)
    if job.result_key:
        _delete_result(job)
    _purge_uploads(job)
    upload_ids = [job.source_id, job.target_id, *job.extra_sources.values_list("id", flat=True)]
    events.job_deleted(job_id=job.id, owner_id=job.owner_id, state=job.state, version=job.version)
    job.delete()
    Upload.objects.filter(id__in=upload_ids).delete()


def job_set_favourite(*, job: Job, favourite: bool) -> Job:
    """Star or unstar a job in its owner's gallery."""
    moved = Job.objects.filter(id=job.id).exclude(favourite=favourite).update(
        favourite=favourite, version=F("version") + 1
    )
    if moved:
        events.job_changed(job.id)
    job.refresh_from_db()
    return job


def originals_available(job: Job) -> bool:
    """Whether the job's uploaded originals are still stored: only until the job ends (they are
    deleted then, by design), so a job can be run again only while it is still going."""
    uploads = (job.source, job.target, *job.extra_sources.all())
    return job.media_deleted_at is None and all(upload.deleted_at is None for upload in uploads)


ORIGINALS_DELETED_MESSAGE = (
    "The original photos were deleted when this swap ended (Visage keeps uploads only while a swap is "
    "in progress), so it can't be run again. Start a new swap with the files to try other options."
)


def job_run_again(*, user, job: Job, options: JobOptions, consent: Consent | None) -> tuple[Job, bool]:
    """Submit the same uploaded originals again with other options, through job_submit like any new
    job (consent, checks, quote, hold, moderation). Raises OriginalsDeleted once they are gone."""
    if not originals_available(job):
        raise OriginalsDeleted(ORIGINALS_DELETED_MESSAGE)
    sources = [job.source, *job.extra_sources.order_by("created_at")]
    try:
        files = [_stored_original(upload) for upload in (*sources, job.target)]
    except storage.ObjectMissing:  # the job ended while we read them
        raise OriginalsDeleted(ORIGINALS_DELETED_MESSAGE) from None
    *source_files, target_file = files
    return job_submit(user=user, sources=source_files, target=target_file, options=options, consent=consent)


def _stored_original(upload: Upload) -> SimpleUploadedFile:
    data = storage.get_bytes(settings.S3_UPLOADS_BUCKET, upload.s3_key)
    return SimpleUploadedFile(upload.original_name or upload.role, data, content_type=upload.media_type)


# --- maintenance ---------------------------------------------------------------------------------


def jobs_sweep_stale(*, now: datetime | None = None) -> dict[str, int]:
    """Move on every job that nothing will move: the database row is the outbox.

    A job's state says which task must exist in RQ (created → its screening, queued → its GPU
    run, running → a live worker's heartbeat). When an enqueue was lost (Redis down at submit or
    after screening) or a worker died, this enqueues the task again under the same deterministic
    RQ id, requeues the job, or fails it once its attempts are spent. It runs in every worker and
    from `manage.py visage_sweep`, so a Redis or worker fault delays a job; it never strands it
    or its credits.
    """
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)
    grace = now - timedelta(seconds=settings.ENQUEUE_GRACE_S)
    counts = {"requeued": 0, "failed": 0, "rescreened": 0, "reenqueued": 0}
    running = Job.objects.filter(state=JobState.RUNNING, heartbeat_at__lt=stale)
    for job_id, attempts, queue_name in running.values_list("id", "attempts", "queue"):
        if dispatch.children_pending(job_id, attempts, queue_name):
            continue  # a segmented video whose segments wait in the queue: alive, not silent
        if attempts < settings.JOB_MAX_ATTEMPTS:
            if job_enqueue_gpu(job_id, from_states=[JobState.RUNNING]):
                counts["requeued"] += 1
        elif job_fail(
            job_id,
            code="worker_lost",
            message="The worker processing this job stopped responding.",
            from_states=[JobState.RUNNING],
        ):
            counts["failed"] += 1
    # Screening that never finished (moderation worker died): screen again.
    screening = Job.objects.filter(state=JobState.SCREENING, created_at__lt=stale)
    for job_id in screening.values_list("id", flat=True):
        if dispatch.screening_pending(job_id):
            continue
        if transition(job_id, from_states=[JobState.SCREENING], to_state=JobState.CREATED):
            dispatch.enqueue_screening(job_id)
            counts["rescreened"] += 1
    # Enqueues that never happened (Redis down when the job was committed).
    for job_id in Job.objects.filter(state=JobState.CREATED, created_at__lt=grace).values_list("id", flat=True):
        if not dispatch.screening_pending(job_id):
            dispatch.enqueue_screening(job_id)
            counts["reenqueued"] += 1
    queued = Job.objects.filter(state=JobState.QUEUED, queued_at__lt=grace)
    for job_id, attempts, queue_name in queued.values_list("id", "attempts", "queue"):
        if not dispatch.run_pending(job_id, attempts, queue_name):
            dispatch.enqueue_gpu(job_id, queue_name, attempt=attempts + 1)
            counts["reenqueued"] += 1
    return counts


def results_purge_expired(*, now: datetime | None = None) -> int:
    """Delete stored results older than the retention period; the job row stays and says so."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.RESULT_RETENTION_DAYS)
    purged = 0
    for job in Job.objects.filter(completed_at__lt=cutoff, media_deleted_at__isnull=True).exclude(
        result_key=""
    ):
        _delete_result(job)
        sharing.share_links_revoke(job=job)
        moved = Job.objects.filter(id=job.id, media_deleted_at__isnull=True).update(
            media_deleted_at=now, version=F("version") + 1
        )
        if moved:
            events.job_changed(job.id)
        purged += moved
    return purged
