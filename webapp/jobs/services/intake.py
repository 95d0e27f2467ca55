"""A create request from the API or the site becomes a job: consent, the uploaded files, the quote,
the stored originals, the job row, the credit hold, then screening (enqueued after commit).
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext as _

from billing import services as billing_services
from billing.choices import Mode, Resolution
from billing.errors import InsufficientCredit
from webapp.media import storage
from webapp.media.choices import MediaKind
from webapp.media.validation import MediaInfo, inspect_upload

from .. import dispatch, events
from ..choices import UploadRole
from ..errors import (
    AccountClosed,
    ConsentRequired,
    IdempotencyKeyMismatch,
    InvalidIdempotencyKey,
    InvalidOption,
)
from ..models import Job, Upload
from . import direct_uploads

IDEMPOTENCY_KEY_MAX_CHARS = Job._meta.get_field("idempotency_key").max_length

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


# VISAGE_CONSENT_TEXT's default (webapp/settings.py), for the catalogue; tests/test_translations.py
# checks the two still agree.
DEFAULT_CONSENT_TEXT = gettext_noop(
    "I have the right to use the face(s) in the photos I upload: they are mine, or the people shown "
    "have agreed to this face swap."
)


def consent_wording() -> str:
    """The consent statement in the request's language: the configured VISAGE_CONSENT_TEXT, translated
    when the catalogue has it (the default wording is; an operator's own is shown as written)."""
    return gettext(settings.CONSENT_TEXT)


def consent_required_message() -> str:
    return _("Please confirm that you have the right to use the face(s) you upload, for every swap: “%(consent)s”") % {
        "consent": consent_wording()
    }


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
    *,
    user,
    sources: Sequence,
    target,
    options: JobOptions,
    consent: Consent | None,
    idempotency_key: str = "",
    source_upload_ids: Sequence = (),
    target_upload_id=None,
) -> tuple[Job, bool]:
    """A create request from the API or the site: check consent and the uploaded files, then create.

    `sources`: the uploaded source photos in order (several photos of one face, or one photo per
    person with `options.face_sources`); `target`: the uploaded photo or video (None when missing).
    `source_upload_ids` / `target_upload_id`: completed direct uploads (POST /api/v1/uploads) named
    instead of posted files, already validated as posted files are.
    Raises ConsentRequired (nothing is stored without consent), UploadRejected or InvalidOption
    naming the field at fault.
    """
    if len(idempotency_key) > IDEMPOTENCY_KEY_MAX_CHARS:
        raise InvalidIdempotencyKey(
            _("The Idempotency-Key header is %(length)d characters long; the limit is %(limit)d (a UUID is 36).")
            % {"length": len(idempotency_key), "limit": IDEMPOTENCY_KEY_MAX_CHARS},
            field="Idempotency-Key",
        )
    if consent is None or not consent.given:
        raise ConsentRequired(consent_required_message(), field="consent")
    if source_upload_ids and sources:
        raise InvalidOption(_("Send the source photos as files or as upload ids, not both."), field="source_upload")
    if target_upload_id and target is not None:
        raise InvalidOption(_("Send the target as a file or as an upload id, not both."), field="target_upload")
    sources = list(sources) or list(source_upload_ids) or [None]
    if len(sources) > settings.MAX_SOURCE_PHOTOS:
        raise InvalidOption(
            _("Send at most %(limit)d photos of the face, not %(count)d.")
            % {"limit": settings.MAX_SOURCE_PHOTOS, "count": len(sources)},
            field="source",
        )
    if options.face_sources:
        highest = max(source for _face, source in options.face_sources)
        if highest >= len(sources):
            raise InvalidOption(
                _("It names source photo %(number)d, but %(count)d were sent (numbered from 0 in upload order).")
                % {"number": highest, "count": len(sources)},
                field="face_sources",
            )
    if source_upload_ids:
        source, *extra_sources = [_direct_source(user, upload_id) for upload_id in source_upload_ids]
    else:
        source, *extra_sources = [inspect_upload(f, field="source", allow_video=False) for f in sources]
    if target_upload_id:
        target_info = direct_uploads.media_info_for_job(user=user, upload_id=target_upload_id, field="target_upload")
        if target_info.kind == MediaKind.VIDEO and not settings.VIDEO_ENABLED:
            raise InvalidOption(_("Video targets are not enabled here."), field="target_upload")
    else:
        target_info = inspect_upload(target, field="target", allow_video=settings.VIDEO_ENABLED)
    if options.face_sources and target_info.kind != MediaKind.IMAGE:
        raise InvalidOption(_("face_sources works with photo targets only."), field="face_sources")
    return job_create(
        user=user,
        source=source,
        target=target_info,
        options=options,
        idempotency_key=idempotency_key,
        extra_sources=extra_sources,
        consent=consent,
    )


def _direct_source(user, upload_id) -> MediaInfo:
    info = direct_uploads.media_info_for_job(user=user, upload_id=upload_id, field="source_upload")
    if info.kind != MediaKind.IMAGE:
        raise InvalidOption(_("A source must be a photo; this upload is a video."), field="source_upload")
    return info


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
    # A direct upload is already stored: the job's Upload takes its key as it is.
    keys = {name: info.stored_key or f"{user.pk}/{job_id}/{name}" for name, info in files.items()}
    put_keys = [keys[name] for name, info in files.items() if not info.stored_key]
    try:
        for name, info in files.items():
            if not info.stored_key:
                storage.put_bytes(settings.S3_UPLOADS_BUCKET, keys[name], info.data, info.media_type)
        with transaction.atomic():
            # The owner's row, locked: an account being deleted (accounts.deletion locks it to close
            # it) either sees this job in its last pass or is closed before the job is recorded.
            # FOR NO KEY UPDATE: the foreign-key checks of other writes (KEY SHARE) go on beside it
            # (FOR UPDATE deadlocked with them under concurrent submits).
            owner = get_user_model().objects.select_for_update(no_key=True)
            if not owner.filter(pk=user.pk, is_active=True).values("pk"):
                raise AccountClosed(_("This account was deleted; nothing was stored or charged."))
            direct_uploads.direct_uploads_consume(
                user=user, keys=[info.stored_key for info in files.values() if info.stored_key]
            )
            job = _record_job(
                job_id,
                user=user,
                files=files,
                keys=keys,
                options=options,
                quote=quote,
                idempotency_key=idempotency_key,
                fingerprint=fingerprint,
                consent=consent,
            )
            try:
                billing_services.hold_place(user=user, job_id=job_id, quote=quote)
            except InsufficientCredit as exc:
                raise InsufficientCredit(
                    required=exc.required, available=exc.available, quote=exc.quote,
                    cheapest=cheapest_price(user=user, target=target),
                ) from None
            events.job_changed(job_id)  # the dashboard learns of jobs made elsewhere (the API, a tab)
            # robust: Redis down must not undo a committed job; the sweeper enqueues it later.
            transaction.on_commit(lambda: dispatch.enqueue_screening(job_id), robust=True)
    except IntegrityError:
        # Two requests with one Idempotency-Key raced; the other one won.
        _delete_objects(put_keys)
        existing = Job.objects.filter(owner=user, idempotency_key=idempotency_key).first()
        if idempotency_key and existing is not None:
            return _replay(existing, fingerprint), False
        raise
    except storage.StorageError:
        # S3 failed (down, frozen): deleting now would wait on it again, and an object whose
        # request timed out may still land after we gave up. The orphan sweep
        # (stored_files.uploads_sweep_orphans) deletes whatever landed without a job.
        raise
    except BaseException:
        _delete_objects(put_keys)  # a direct upload stays the user's, ready for another try
        raise
    return job, True


def job_quote(*, user, target: MediaInfo, mode: str, resolution: str):
    """The price of a job on this target: the one function behind the upload page's estimate,
    POST /api/v1/quotes and the job's stored quote, from the same inputs (the target's own size,
    the probed frame count), so all three agree to the cent. It turns the probed upload into
    billing's plain figures: billing.services.quote_job never sees webapp.media's MediaInfo."""
    return billing_services.quote_job(
        user=user,
        width=target.width,
        height=target.height,
        frames=target.frames,
        mode=mode,
        resolution=resolution,
        kind=target.kind,
    )


def cheapest_price(*, user, target: MediaInfo) -> Decimal:
    """The lowest price of this target at any quality and resolution (what a person out of credits
    could still choose; on a small photo every choice may cost the plan's minimum)."""
    return min(
        job_quote(user=user, target=target, mode=mode, resolution=resolution).hold_amount
        for mode in Mode.values
        for resolution in Resolution.values
    )


def _record_job(
    job_id: uuid.UUID,
    *,
    user,
    files: dict[str, MediaInfo],
    keys: dict[str, str],
    options: JobOptions,
    quote,
    idempotency_key: str,
    fingerprint: str,
    consent: Consent | None = None,
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
    extra_sources = [upload for name, upload in uploads.items() if name.startswith("source-")]
    if extra_sources:  # set() reads the relation first, a query for none
        job.extra_sources.add(*extra_sources)
    return job


def _consent_fields(consent: Consent | None) -> dict:
    if consent is None or not consent.given:
        return {}
    return {
        "consent_at": timezone.now(),
        "consent_version": consent.version or settings.CONSENT_VERSION,
        "consent_text": consent.text or consent_wording(),  # the wording the user was shown
        "consent_channel": consent.channel,
    }


def _replay(existing: Job, fingerprint: str) -> Job:
    if existing.request_hash != fingerprint:
        raise IdempotencyKeyMismatch(
            _("This Idempotency-Key was already used with a different request; use a new key for a new job.")
        )
    return existing


def _delete_objects(keys: Iterable[str]) -> None:
    for key in keys:
        try:
            storage.delete(settings.S3_UPLOADS_BUCKET, key)
        except storage.StorageError:
            logger.exception("could not delete orphaned upload %s", key)
