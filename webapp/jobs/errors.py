"""Errors a user can cause with a job request; refusals.py words them once, the API as problem+json,
the site as messages next to the field they name."""

from __future__ import annotations


class JobError(Exception):
    code = "job_error"
    status = 400

    def __init__(self, message: str, *, field: str = ""):
        super().__init__(message)
        self.message = message
        self.field = field


class AccountClosed(JobError):
    """The account was deleted while this request was on its way (it signed in before)."""

    code = "account_closed"
    status = 403


class InvalidOption(JobError):
    """A request field that is well-formed but cannot work (names a photo that was not sent, …)."""

    code = "validation_error"


class IdempotencyKeyMismatch(JobError):
    code = "idempotency_key_mismatch"
    status = 422


class InvalidIdempotencyKey(JobError):
    """A key longer than the column that stores it: cutting it would make two keys collide."""

    code = "invalid_idempotency_key"


class JobNotCancelable(JobError):
    code = "job_not_cancelable"
    status = 409


class ConsentRequired(JobError):
    """The uploader did not confirm they may use the face(s) they upload."""

    code = "consent_required"
    status = 422


class ShareLinksDisabled(JobError):
    """This deployment has not turned share links on (VISAGE_SHARE_LINKS_ENABLED)."""

    code = "share_links_disabled"
    status = 403


class JobNotShareable(JobError):
    """Only a finished, visible result that is still stored can be shared."""

    code = "job_not_shareable"
    status = 409


class OriginalsDeleted(JobError):
    """Run again needs the uploaded originals, which are deleted when a job ends."""

    code = "originals_deleted"
    status = 409


class UploadNotFound(JobError):
    """No direct upload with this id belongs to the caller (another user's is not found either)."""

    code = "upload_not_found"
    status = 404


class UploadIncomplete(JobError):
    """Complete was asked for before S3 held every part (or a part has the wrong size)."""

    code = "upload_incomplete"
    status = 409


class UploadNotReady(JobError):
    """A job named a direct upload that is not complete and valid, or is used, rejected or expired."""

    code = "upload_not_ready"
    status = 409


class ChecksumMismatch(JobError):
    """The stored object is not the file declared at create (size or SHA-256 differ)."""

    code = "checksum_mismatch"
    status = 422
