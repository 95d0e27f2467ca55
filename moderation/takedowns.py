"""Takedown reports: someone reports a result that uses their face. The report goes to the
moderators' queue; they protect the reported face (its embedding becomes a protected identity, so
new jobs with it are rejected) and close the report.
"""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from swap.errors import InvalidImage
from swap.image_io import decode_image

from . import hashes, identities
from .choices import ReportStatus
from .models import ProtectedFace, ProtectedIdentity, TakedownReport

logger = logging.getLogger(__name__)


def takedown_report_create(
    *,
    reporter_name: str,
    reporter_email: str,
    relation: str,
    details: str = "",
    link: str = "",
    subject_id: uuid.UUID | None = None,
    photo: bytes | None = None,
    file_sha256: str = "",
    file_provenance: dict | None = None,
) -> TakedownReport:
    """Record a report for the moderators' queue. `photo` (the reported image, or a frame of it) is
    embedded and discarded: only its largest face's embedding is kept, for protecting it later."""
    kind, vector = "", None
    if photo is not None:
        try:
            embedded = identities.largest_embedding(
                decode_image(photo, which="reported", max_pixels=settings.MAX_IMAGE_PIXELS)
            )
        except InvalidImage:
            embedded = None
        if embedded is not None:
            vector, kind = [float(v) for v in embedded[0]], embedded[1]
    report = TakedownReport.objects.create(
        reporter_name=reporter_name,
        reporter_email=reporter_email,
        relation=relation,
        details=details,
        link=link,
        subject_id=subject_id,
        file_sha256=file_sha256 or (hashes.sha256_hex(photo) if photo else ""),
        file_provenance=file_provenance or {},
        face_embedding_kind=kind,
        face_vector=vector,
    )
    logger.info("takedown report %s for subject %s (face embedded: %s)", report.pk, subject_id, bool(vector))
    return report


class ReportAlreadyDecided(Exception):
    """The report was decided otherwise before this decision (dismissed; or resolved, for a
    dismissal): by another moderator, or by the same one in another tab. That decision stands."""


def _decidable(status: str) -> list[str]:
    """The states a report can be given `status` from: protecting the face and taking the result
    down add to each other (a report may ask for both), a dismissal only closes an open report."""
    return [ReportStatus.OPEN] if status == ReportStatus.DISMISSED else [ReportStatus.OPEN, ReportStatus.RESOLVED]


@transaction.atomic
def takedown_report_protect_face(*, report: TakedownReport, actor, name: str = "") -> ProtectedIdentity:
    """One action: the reported face becomes a protected identity (its embedding; no photo). Not on
    a dismissed report (ReportAlreadyDecided, nothing created)."""
    if not report.face_vector:
        raise ValidationError(_("This report has no face embedding (no face was found in what was reported)."))
    identity = report.protected_identity
    if identity is None:
        identity = ProtectedIdentity.objects.create(
            name=name or f"{report.reporter_name} (takedown report #{report.pk})",
            note=f"From takedown report #{report.pk} ({report.reporter_email}).",
            created_by=actor,
        )
        ProtectedFace.objects.create(
            identity=identity,
            embedding_kind=report.face_embedding_kind,
            vector=report.face_vector,
            source_sha256=report.file_sha256,
        )
    decided = TakedownReport.objects.filter(pk=report.pk, status__in=_decidable(ReportStatus.RESOLVED)).update(
        protected_identity=identity, status=ReportStatus.RESOLVED, handled_by=actor, handled_at=timezone.now()
    )
    report.refresh_from_db()
    if not decided:
        raise ReportAlreadyDecided(report.pk)  # the identity made above is rolled back with it
    return identity


def takedown_report_close(*, report: TakedownReport, actor, status: str, taken_down: bool = False) -> bool:
    """Resolve or dismiss a report; False (nothing changed) when it was decided otherwise first."""
    fields = {"status": status, "handled_by": actor, "handled_at": timezone.now()}
    if taken_down:
        fields["result_taken_down"] = True
    decided = TakedownReport.objects.filter(pk=report.pk, status__in=_decidable(status)).update(**fields)
    report.refresh_from_db()
    return bool(decided)
