"""Share links: an unlisted, expiring, revocable public page for one job's result.

A link's token is 256 bits derived with the server's secret key from a random per-link nonce;
the database keeps the nonce and the token's SHA-256 (to find the link from its URL), never the
token. So a leaked database opens no link, while the owner can still be shown their active link.
Rotating SECRET_KEY makes existing links unshowable to their owner (they still open; revoke and
share again to get a new one).
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext as _

from moderation import selectors as moderation_selectors

from . import events
from .choices import STATE_LABELS, JobState
from .errors import JobNotShareable, ShareLinksDisabled
from .models import Job, ShareLink

TOKEN_SALT = "visage.jobs.share_link"


def token_for(nonce: str) -> str:
    digest = salted_hmac(TOKEN_SALT, nonce, algorithm="sha256").digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def not_shareable_reason(job: Job) -> str:
    """Why `job` cannot be shared, in words for its owner; empty when it can."""
    if job.state == JobState.REVIEW:
        return _("This swap is being reviewed by a moderator; it can be shared once it is published.")
    if job.state != JobState.SUCCEEDED:
        return _("Only finished swaps can be shared; this one is %(state)s.") % {
            "state": _(STATE_LABELS.get(job.state, job.state)).lower()
        }
    if job.media_deleted_at is not None or not job.result_key:
        return _("The result was deleted (after the retention period or a takedown), so there is nothing to share.")
    if not job.result_visible:
        return _("The result is not published, so it cannot be shared.")
    if moderation_selectors.takedown_report_open(subject_id=job.id):
        return _("Someone reported this result and a moderator is reviewing it; it cannot be shared meanwhile.")
    return ""


def share_link_active(job: Job) -> ShareLink | None:
    """The job's newest link that still opens (reads `job.share_links.all()`, so prefetching helps)."""
    now = timezone.now()
    live = [link for link in job.share_links.all() if link.revoked_at is None and link.expires_at > now]
    return max(live, key=lambda link: link.created_at) if live else None


def share_link_create(*, job: Job) -> tuple[ShareLink, str, bool]:
    """The owner's link to `job`'s result: the active one when there is one, else a new one valid for
    SHARE_LINK_TTL_DAYS. Returns (link, token, created). Raises ShareLinksDisabled or JobNotShareable."""
    if not settings.SHARE_LINKS_ENABLED:
        raise ShareLinksDisabled(_("Share links are turned off on this Visage (VISAGE_SHARE_LINKS_ENABLED)."))
    reason = not_shareable_reason(job)
    if reason:
        raise JobNotShareable(reason)
    with transaction.atomic():
        Job.objects.select_for_update().filter(id=job.id).first()  # one link per job, even racing
        existing = share_link_active(Job.objects.get(id=job.id))
        if existing is not None:
            token = token_for(existing.nonce)
            if token_hash(token) == existing.token_sha256:  # unless SECRET_KEY changed since
                return existing, token, False
        nonce = secrets.token_hex(32)
        token = token_for(nonce)
        link = ShareLink.objects.create(
            job=job,
            nonce=nonce,
            token_sha256=token_hash(token),
            expires_at=timezone.now() + timedelta(days=settings.SHARE_LINK_TTL_DAYS),
        )
        _job_shows_change(job)
    return link, token, True


def share_links_revoke(*, job: Job) -> int:
    """Stop sharing: every link of the job stops opening at once. Returns how many were live."""
    with transaction.atomic():
        revoked = ShareLink.objects.filter(job_id=job.id, revoked_at__isnull=True).update(revoked_at=timezone.now())
        if revoked:
            _job_shows_change(job)
    return revoked


def _job_shows_change(job: Job) -> None:
    # The job object lists its active link: a new version, so ETags and live pages follow.
    Job.objects.filter(id=job.id).update(version=F("version") + 1)
    events.job_changed(job.id)


def shared_job(token: str) -> Job | None:
    """The job a public link shows, counting the view; None when the link is unknown, revoked,
    expired, sharing is off, or the result can no longer be shown (one answer for all)."""
    if not settings.SHARE_LINKS_ENABLED or not token or len(token) > 100:
        return None
    link = (
        ShareLink.objects.select_related("job")
        .filter(token_sha256=token_hash(token), revoked_at__isnull=True, expires_at__gt=timezone.now())
        .first()
    )
    if link is None or not_shareable_reason(link.job):
        return None
    ShareLink.objects.filter(id=link.id).update(view_count=F("view_count") + 1)
    return link.job


SHARE_URL_TOKEN = re.compile(r"/s/([A-Za-z0-9_-]{20,100})")


def job_for_share_url(text: str) -> Job | None:
    """The job a pasted share link points at, even a revoked or expired one (takedown reports)."""
    for token in SHARE_URL_TOKEN.findall(text or ""):
        link = ShareLink.objects.select_related("job").filter(token_sha256=token_hash(token)).first()
        if link is not None:
            return link.job
    return None


def share_link_url_path(token: str) -> str:
    return reverse("share-page", args=[token])
