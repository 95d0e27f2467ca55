"""Direct uploads: the app sends a file in parts straight to S3 (presigned multipart upload), the
web process only signs URLs, lists what S3 holds and, once complete, validates the stored object
exactly as a file posted to POST /api/v1/jobs (webapp.media.validation). A job then names it.

Lifecycle: pending → ready (validated) → used (by one job); or rejected (failed validation) or
expired (abandoned: the sweep aborts the multipart upload and deletes the object). Nothing is held
or charged until a job is created from it, so an abandoned upload is never billed.
"""

from __future__ import annotations

import logging
import re
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from webapp.media import multipart, storage
from webapp.media.choices import MediaKind
from webapp.media.validation import MEDIA_TYPES, MediaInfo, UploadRejected, inspect_stored_file

from ..choices import DirectUploadState
from ..errors import ChecksumMismatch, UploadIncomplete, UploadNotFound, UploadNotReady
from ..models import DirectUpload

logger = logging.getLogger(__name__)

MAX_PARTS = 10_000  # S3's limit
SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class PartTarget:
    part_number: int
    size_bytes: int
    url: str


def size_limit_bytes(kind: str) -> int:
    return settings.VIDEO_MAX_BYTES if kind == MediaKind.VIDEO else settings.MAX_UPLOAD_BYTES


def direct_upload_create(*, user, kind: str, size_bytes: int, content_type: str, sha256: str) -> DirectUpload:
    """Start a multipart upload in S3 for a file of the declared size (refused over the limit for
    its kind, as a posted file would be)."""
    field = "size_bytes"
    if kind == MediaKind.VIDEO and not settings.VIDEO_ENABLED:
        raise UploadRejected("unsupported_media_type", _("Video targets are not enabled here."), field="kind")
    limit_bytes = size_limit_bytes(kind)
    if size_bytes > limit_bytes:
        raise UploadRejected(
            "file_too_large",
            _("The file is %(size)d bytes; the limit for a %(kind)s is %(limit)d bytes.")
            % {"size": size_bytes, "kind": kind, "limit": limit_bytes},
            field=field,
        )
    part_size = settings.DIRECT_UPLOAD_PART_BYTES
    part_count = max(1, -(-size_bytes // part_size))
    if part_count > MAX_PARTS:
        raise UploadRejected(
            "file_too_large", _("The file needs more than %(max)d parts.") % {"max": MAX_PARTS}, field=field
        )
    upload = DirectUpload(
        owner=user,
        kind=kind,
        content_type=content_type,
        size_bytes=size_bytes,
        sha256=sha256.lower(),
        part_size_bytes=part_size,
        part_count=part_count,
        expires_at=timezone.now() + timedelta(seconds=settings.DIRECT_UPLOAD_EXPIRY_S),
    )
    upload.s3_key = f"{user.pk}/direct/{upload.id}"
    # The object is stored under the declared type only when it is one an upload can be: a file
    # declared text/html (a JPEG that is also a page) was stored and served as text/html, and ran
    # as a page on the storage's origin for whoever opened it (a moderator). Its content is
    # sniffed at completion either way.
    stored_type = content_type.lower() if content_type.lower() in MEDIA_TYPES else "application/octet-stream"
    upload.s3_upload_id = multipart.create(settings.S3_UPLOADS_BUCKET, upload.s3_key, content_type=stored_type)
    upload.save()
    return upload


def direct_upload_get(*, user, upload_id) -> DirectUpload:
    upload = DirectUpload.objects.filter(id=upload_id, owner=user).first()
    if upload is None:
        raise UploadNotFound(_("No upload with this id."), field="upload")
    return upload


def part_targets(upload: DirectUpload) -> list[PartTarget]:
    """Every part's expected size and a fresh presigned URL (a resumed client may need new ones)."""
    return [
        PartTarget(
            part.part_number,
            part.size_bytes,
            multipart.part_url(
                settings.S3_UPLOADS_BUCKET,
                upload.s3_key,
                upload_id=upload.s3_upload_id,
                part_number=part.part_number,
                size_bytes=part.size_bytes,
                expiry_s=settings.S3_PRESIGN_EXPIRY_S,
            ),
        )
        for part in _part_sizes(upload)
    ]


def parts_received(upload: DirectUpload) -> list[multipart.StoredPart]:
    """The parts S3 already holds (none once the upload is no longer pending)."""
    if upload.state != DirectUploadState.PENDING:
        return []
    try:
        return multipart.parts(settings.S3_UPLOADS_BUCKET, upload.s3_key, upload_id=upload.s3_upload_id)
    except storage.ObjectMissing:  # joined by a complete that failed after it: complete again
        return []


def direct_upload_complete(*, upload: DirectUpload) -> DirectUpload:
    """Join the parts in S3, then validate the stored object (streamed to a temporary file) as a
    posted file is validated. Repeating it on a ready upload answers the same. Raises
    UploadIncomplete (parts missing or of the wrong size), ChecksumMismatch or UploadRejected
    (then the object is deleted and the upload is rejected)."""
    if upload.state == DirectUploadState.READY:
        return upload
    if upload.state != DirectUploadState.PENDING:
        raise UploadNotReady(_("This upload is %(state)s; start a new one.") % {"state": upload.state}, field="upload")
    stored = _stored_parts(upload)
    if stored is not None:  # else joined by a complete that failed after it: validate the object
        expected = {t.part_number: t.size_bytes for t in _part_sizes(upload)}
        have = {p.part_number: p.size_bytes for p in stored}
        missing = [n for n, size in expected.items() if have.get(n) != size]
        if missing:
            raise UploadIncomplete(
                _("S3 does not hold every part yet: send part(s) %(parts)s (GET the upload for the list), then complete again.")
                % {"parts": ", ".join(map(str, missing[:20]))},
                field="parts",
            )
        multipart.complete(
            settings.S3_UPLOADS_BUCKET,
            upload.s3_key,
            upload_id=upload.s3_upload_id,
            stored=[p for p in stored if p.part_number in expected],
        )
    try:
        info = _validate_stored(upload)
    except (UploadRejected, ChecksumMismatch):
        storage.delete(settings.S3_UPLOADS_BUCKET, upload.s3_key)
        DirectUpload.objects.filter(id=upload.id, state=DirectUploadState.PENDING).update(
            state=DirectUploadState.REJECTED, completed_at=timezone.now()
        )
        raise
    now = timezone.now()
    DirectUpload.objects.filter(id=upload.id, state=DirectUploadState.PENDING).update(
        state=DirectUploadState.READY,
        media=_media_fields(info),
        completed_at=now,
        expires_at=now + timedelta(seconds=settings.DIRECT_UPLOAD_EXPIRY_S),
    )
    current = DirectUpload.objects.filter(id=upload.id).first()
    if current is None:  # deleted meanwhile (its owner's account): the file joined just now goes too
        storage.delete(settings.S3_UPLOADS_BUCKET, upload.s3_key)
        raise UploadNotFound(_("No upload with this id."), field="upload")
    return current


def _stored_parts(upload: DirectUpload) -> list[multipart.StoredPart] | None:
    """The parts S3 holds, or None when a complete that then failed (storage down while
    validating) joined them already: S3 holds the object, no longer the multipart upload. Its
    retry validates the object (it answered 503 for ever: the parts could no longer be listed)."""
    try:
        return multipart.parts(settings.S3_UPLOADS_BUCKET, upload.s3_key, upload_id=upload.s3_upload_id)
    except storage.ObjectMissing:
        if storage.exists(settings.S3_UPLOADS_BUCKET, upload.s3_key):
            return None
        raise


def _part_sizes(upload: DirectUpload) -> list[PartTarget]:
    return [
        PartTarget(n, min(upload.part_size_bytes, upload.size_bytes - (n - 1) * upload.part_size_bytes), "")
        for n in range(1, upload.part_count + 1)
    ]


def _validate_stored(upload: DirectUpload) -> MediaInfo:
    field = "target" if upload.kind == MediaKind.VIDEO else "file"
    limit_bytes = size_limit_bytes(upload.kind)
    with tempfile.TemporaryDirectory(prefix="visage-upload-") as tmp:
        path = Path(tmp) / "object"
        with path.open("wb") as out:
            size, sha256 = multipart.copy_to_file(
                settings.S3_UPLOADS_BUCKET, upload.s3_key, out, limit_bytes=limit_bytes
            )
        if size > limit_bytes:  # re-checked on what is really there, whatever was declared
            raise UploadRejected(
                "file_too_large", _("The stored file is over the limit of %(limit)d bytes.") % {"limit": limit_bytes},
                field=field,
            )
        if size != upload.size_bytes or sha256 != upload.sha256:
            raise ChecksumMismatch(
                _(
                    "The stored file (%(size)d bytes, SHA-256 %(sha256)s) is not the one declared (%(declared_size)d "
                    "bytes, SHA-256 %(declared_sha256)s): a part was corrupted or replaced. Start a new upload."
                ) % {"size": size, "sha256": sha256, "declared_size": upload.size_bytes, "declared_sha256": upload.sha256},
                field="sha256",
            )
        # What is stored must be the kind declared (which chose the size limit): a video declared as
        # a photo is refused as one, and a photo declared as a video is said so, not kept as a "video".
        allow_video = settings.VIDEO_ENABLED and upload.kind == MediaKind.VIDEO
        info = inspect_stored_file(path, sha256=sha256, field=field, allow_video=allow_video)
        if info.kind != upload.kind:
            raise UploadRejected(
                "unsupported_media_type",
                _("The stored file is a photo, but this upload was started as a video: start a new upload with "
                  "kind \"image\"."),
                field=field,
            )
        return info


def _media_fields(info: MediaInfo) -> dict:
    return {
        "media_type": info.media_type,
        "kind": info.kind,
        "width": info.width,
        "height": info.height,
        "frames": info.frames,
        "fps": info.fps,
        "duration_seconds": info.duration_seconds,
        "has_audio": info.has_audio,
        "size_bytes": info.size_bytes,
        "sha256": info.sha256,
    }


def media_info_for_job(*, user, upload_id, field: str) -> MediaInfo:
    """The validated file a job names by its upload id, as intake uses a posted one (no bytes: the
    object stays where it is and becomes the job's Upload). Raises UploadNotFound, UploadNotReady."""
    upload = DirectUpload.objects.filter(id=upload_id, owner=user).first()
    if upload is None:
        raise UploadNotFound(_("No upload %(id)s of yours exists.") % {"id": upload_id}, field=field)
    # A used one passes here so an Idempotency-Key replay finds its job; direct_uploads_consume
    # refuses it for a new job.
    if upload.state not in (DirectUploadState.READY, DirectUploadState.USED):
        if upload.state == DirectUploadState.PENDING:
            message = _("Upload %(id)s is %(state)s: complete it first.")
        else:
            message = _("Upload %(id)s is %(state)s: start a new upload.")
        raise UploadNotReady(message % {"id": upload_id, "state": upload.state}, field=field)
    media = upload.media
    return MediaInfo(
        b"",
        media["sha256"],
        media["media_type"],
        media["kind"],
        media["width"],
        media["height"],
        frames=media["frames"],
        fps=media["fps"],
        duration_seconds=media["duration_seconds"],
        has_audio=media["has_audio"],
        stored_key=upload.s3_key,
        stored_size_bytes=media["size_bytes"],
    )


def direct_uploads_consume(*, user, keys: list[str]) -> None:
    """Inside the job's transaction: mark the named ready uploads used, once (a concurrent job that
    took one first makes this raise, rolling the second job back)."""
    if not keys:
        return
    taken = DirectUpload.objects.filter(owner=user, s3_key__in=keys, state=DirectUploadState.READY).update(
        state=DirectUploadState.USED
    )
    if taken != len(set(keys)):
        raise UploadNotReady(
            _("An upload named by this request was already used by a job: upload the file again."),
            field="target_upload",
        )


def direct_uploads_expire(*, now: datetime | None = None) -> int:
    """Abort and delete every pending or ready upload past its expiry (never billed: no job holds it)."""
    now = now or timezone.now()
    expired = 0
    stale = DirectUpload.objects.filter(
        Q(state=DirectUploadState.PENDING) | Q(state=DirectUploadState.READY), expires_at__lt=now
    )
    for upload in stale:
        # Claim it first: a job taking it at this moment wins or loses cleanly.
        if not DirectUpload.objects.filter(id=upload.id, state=upload.state).update(
            state=DirectUploadState.EXPIRED
        ):
            continue
        direct_upload_discard_stored(upload)
        expired += 1
    return expired


def direct_upload_discard_stored(upload: DirectUpload) -> None:
    """Abort the upload's multipart upload (its parts) and delete its object, whichever exist."""
    multipart.abort(settings.S3_UPLOADS_BUCKET, upload.s3_key, upload_id=upload.s3_upload_id)
    storage.delete(settings.S3_UPLOADS_BUCKET, upload.s3_key)
