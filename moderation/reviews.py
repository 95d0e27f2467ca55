"""Moderation writes by people: a moderator's review of a flagged verdict, and the reference photos
staff register for a protected identity (only the face embedding is kept)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from swap.errors import InvalidImage
from swap.image_io import decode_image

from . import hashes, identities, selectors
from .choices import Decision, ReviewDecision
from .models import ModerationRecord, ProtectedFace, ProtectedIdentity, Verdict


@transaction.atomic
def verdict_record_review(
    *, subject_id: uuid.UUID, reviewer, approved: bool, note: str = ""
) -> Verdict | None:
    """Record who decided and when on the flagged verdict and its images. A rejected image becomes
    known-bad, so the same content is rejected at once if it is uploaded again."""
    verdict = selectors.verdict_for_review(subject_id)
    if verdict is None:
        return None
    now = timezone.now()
    Verdict.objects.filter(id=verdict.id).update(
        reviewed_by=reviewer,
        reviewed_at=now,
        review_note=note,
        review_decision=ReviewDecision.APPROVED if approved else ReviewDecision.REJECTED,
    )
    records = ModerationRecord.objects.filter(verdict=verdict)
    records.update(reviewed_by=reviewer, reviewed_at=now)
    if not approved:
        records.exclude(decision=Decision.ALLOW).update(
            known_bad=True, known_bad_code="content_rejected", decision=Decision.REJECT
        )
    verdict.refresh_from_db()
    return verdict


@transaction.atomic
def protected_identity_add_reference(*, identity: ProtectedIdentity, photo: bytes) -> ProtectedFace:
    """Embed the largest face of a reference photo; only the embedding is kept, never the photo."""
    try:
        pixels = decode_image(photo, which="reference", max_pixels=settings.MAX_IMAGE_PIXELS)
    except InvalidImage as exc:
        raise ValidationError(str(exc)) from exc
    embedded = identities.largest_embedding(pixels)
    if embedded is None:
        raise ValidationError(_("No face was found in the reference photo; upload a clear photo of the person."))
    vector, kind = embedded
    return ProtectedFace.objects.create(
        identity=identity,
        embedding_kind=kind,
        vector=[float(v) for v in vector],
        source_sha256=hashes.sha256_hex(photo),
    )
