"""A job's strong ETag: which version of its API representation a client holds.

Derived from the row only (no ledger or S3 call), so the writer that publishes a change and the
reader that builds a representation compute the same value. `Job.version` rises with every write
that changes the representation; the other fields are hashed too so that a write that forgot the
version still changes the ETag.

The body's sentences are in the request's language, so the ETag names the language too. A
succeeded job's representation carries presigned result URLs that expire
(S3_PRESIGN_EXPIRY_S): its ETag also names the half-expiry period it was built in, so a 304 never
tells a client to keep URLs with less than half their lifetime left.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from django.utils import translation
from django.utils.http import parse_etags

from .choices import TERMINAL_STATES, JobState

# What job_payload shows that can change after the job is created. Not `queue`: a queued job's
# place in line moves as other jobs leave the queue, so its body is never cached (payload.py).
ETAG_FIELDS = (
    "id", "owner_id", "version", "state", "progress", "cost", "error_code", "error_message",
    "result_key", "result_visible", "media_deleted_at", "completed_at",
)


@dataclass(frozen=True)
class Representation:
    """Enough about one version of a job's representation to answer a conditional request."""

    job_id: str
    owner_id: int
    version: int
    base: str  # hash of the row fields; the ETag is this, or this and the URL period
    expiring: bool  # it carries presigned URLs
    terminal: bool

    def etag(self, *, now: float | None = None) -> str:
        """In the request's language too: the body's sentences are (credits, cost, errors), so a
        client that switched language must not be told its copy in the other one is current."""
        tag = f"{self.base}:{translation.get_language() or ''}"
        if self.expiring:
            period_s = max(1, settings.S3_PRESIGN_EXPIRY_S // 2)
            tag += f":{int((time.time() if now is None else now) // period_s)}"
        return f'"{hashlib.sha256(tag.encode()).hexdigest()[:32]}"'


def representation(fields: dict) -> Representation:
    """From a Job's ETAG_FIELDS (a `.values()` row or `fields_of(job)`)."""
    base = hashlib.sha256("\x1f".join(str(fields[name]) for name in ETAG_FIELDS).encode()).hexdigest()
    return Representation(
        job_id=str(fields["id"]),
        owner_id=fields["owner_id"],
        version=fields["version"],
        base=base,
        expiring=bool(
            fields["state"] == JobState.SUCCEEDED
            and fields["result_visible"]
            and fields["result_key"]
            and not fields["media_deleted_at"]
        ),
        terminal=fields["state"] in TERMINAL_STATES,
    )


def fields_of(job) -> dict:
    return {name: getattr(job, name) for name in ETAG_FIELDS}


def job_etag(job) -> str:
    return representation(fields_of(job)).etag()


def if_none_match(request: HttpRequest) -> list[str]:
    """The ETags a client says it holds (weak ones compared weakly, as RFC 9110 says for If-None-Match)."""
    header = request.headers.get("If-None-Match", "")
    return [tag.removeprefix("W/") for tag in parse_etags(header)] if header else []


def matches(etag: str, client_etags: list[str]) -> bool:
    return bool(client_etags) and ("*" in client_etags or etag in client_etags)
