"""What a user is told when a request about a job is refused: one mapping from the exceptions the
services raise to a message, an HTTP status and a stable problem code. The API renders it as
problem+json, the site's upload page next to the field it names, "Run again" as a message."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext, gettext_noop

from billing.errors import InsufficientCredit, PlanChanged
from webapp.media.storage import StorageError
from webapp.media.validation import UploadRejected

from .errors import JobError

STORAGE_UNAVAILABLE = gettext_noop(
    "Storage is briefly unavailable, so nothing was charged. Please try again in a minute."
)

# What a submission may raise that is the user's to hear about (anything else is a bug: a 500).
REFUSALS = (UploadRejected, JobError, InsufficientCredit, PlanChanged, StorageError)


@dataclass(frozen=True)
class Refusal:
    status: int
    code: str
    message: str
    field: str = ""  # the request field at fault; "" when it is about the request as a whole
    top_up: bool = False  # not enough credits: the answer says where to buy more


def refusal_for(exc: Exception) -> Refusal | None:
    """The refusal an exception stands for; None when it is none of REFUSALS."""
    if isinstance(exc, UploadRejected | JobError):
        return Refusal(status=exc.status, code=exc.code, message=exc.message, field=exc.field)
    if isinstance(exc, InsufficientCredit):
        return Refusal(status=exc.status_code, code=exc.default_code, message=str(exc.detail), top_up=True)
    if isinstance(exc, PlanChanged):
        return Refusal(status=exc.status_code, code=exc.default_code, message=str(exc.detail))
    if isinstance(exc, StorageError):
        # S3 refused or timed out before anything was held: the user may simply try again.
        return Refusal(status=503, code="service_unavailable", message=gettext(STORAGE_UNAVAILABLE))
    return None
