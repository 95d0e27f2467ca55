"""Read-only moderation queries (the admin, /healthz and the screening services use these)."""

from __future__ import annotations

import uuid

import numpy as np

from . import clip, conf, hashes, identities, nsfw, ocr
from .choices import Decision, ReportStatus, Stage
from .models import BlockedTerm, ModerationRecord, ProtectedFace, ProtectedIdentity, TakedownReport, Verdict


def blocked_terms() -> list[str]:
    return list(BlockedTerm.objects.filter(active=True).values_list("term", flat=True))


def protected_vectors(*, kind: str) -> list[identities.ProtectedVector]:
    rows = ProtectedFace.objects.filter(identity__active=True, embedding_kind=kind).values_list(
        "identity_id", "identity__name", "vector"
    )
    return [
        identities.ProtectedVector(identity_id, name, np.asarray(vector, np.float32))
        for identity_id, name, vector in rows
    ]


def known_bad_matches(images: list[tuple[str, str]]) -> list[tuple[ModerationRecord, int] | None]:
    """Per (sha256, phash) image: a rejected image it is (sha256) or looks like (pHash within the
    threshold), with the distance; None when neither. Two queries for all the images (a job's source,
    extra photos and target, or a clip's sampled frames), whatever their number: the known pHashes
    are read once, not once an image."""
    exact: dict[str, ModerationRecord] = {}
    for record in ModerationRecord.objects.filter(
        known_bad=True, sha256__in={sha256 for sha256, _ in images}
    ).order_by("-created_at"):
        exact[record.sha256] = record  # the oldest record of each hash stays
    if all(sha256 in exact for sha256, _ in images):
        return [(exact[sha256], 0) for sha256, _ in images]
    known = list(
        ModerationRecord.objects.filter(known_bad=True, known_bad_code="content_rejected").values_list(
            "id", "phash"
        )
    )
    nearest = hashes.nearest_each([phash for _, phash in images], [h for _, h in known])
    matches = [
        None if sha256 in exact or hit is None or hit[1] > conf.phash_max_distance() else (known[hit[0]][0], hit[1])
        for (sha256, _), hit in zip(images, nearest, strict=True)
    ]
    records = ModerationRecord.objects.in_bulk({match[0] for match in matches if match is not None})
    return [
        (exact[sha256], 0) if sha256 in exact else None if match is None else (records[match[0]], match[1])
        for (sha256, _), match in zip(images, matches, strict=True)
    ]


def takedown_report_open(*, subject_id: uuid.UUID) -> bool:
    """Whether a takedown report about this subject waits for a moderator."""
    return TakedownReport.objects.filter(subject_id=subject_id, status=ReportStatus.OPEN).exists()


def verdict_for_review(subject_id: uuid.UUID) -> Verdict | None:
    """The verdict that put this subject in review: the output's when the result was flagged."""
    verdicts = {v.stage: v for v in Verdict.objects.filter(subject_id=subject_id).prefetch_related("checks")}
    for stage in (Stage.OUTPUT, Stage.FRAMES, Stage.INPUT):
        verdict = verdicts.get(stage)
        if verdict is not None and verdict.decision != Decision.ALLOW:
            return verdict
    return verdicts.get(Stage.INPUT)


def verdict_reasons(verdict: Verdict) -> list[str]:
    """One short line per check that did not simply pass, for the review queue."""
    lines = []
    for check in verdict.checks.all():
        if check.outcome == "pass":
            continue
        score = "" if check.score is None else f" {check.score:.2f}"
        threshold = "" if check.threshold is None else f" (threshold {check.threshold:.2f})"
        why = _why(check.check_name, check.detail)
        lines.append(f"{check.role} · {check.check_name}: {check.outcome}{score}{threshold}{why}")
    return lines


def _why(check_name: str, detail: dict) -> str:
    if check_name == "nsfw" and detail.get("fired"):
        return " — " + ", ".join(f"{k} {v['score']:.2f}" for k, v in detail["fired"].items())
    if check_name == "clip" and detail.get("prompt"):
        return f" — “{detail['prompt']}”"
    if check_name == "ocr" and detail.get("matched_terms"):
        return " — terms: " + ", ".join(detail["matched_terms"])
    if check_name == "identity" and detail.get("identity"):
        return f" — {detail['identity']}"
    if check_name == "known_hash" and detail.get("matched_record"):
        return f" — matches record #{detail['matched_record']}"
    if detail.get("status"):
        return f" — {detail['status']}"
    return ""


def readiness_report() -> dict:
    """What each check will do in this process; a disabled check says so (shown on /healthz)."""
    nsfw_path = conf.nsfw_model_path()
    return {
        "nsfw": ("ready" if nsfw.loaded() else "configured")
        if nsfw_path.is_file()
        else f"error: model {nsfw_path} missing",
        "clip": clip.status(),
        "ocr": ("ready" if ocr.loaded() else "configured")
        if conf.ocr_enabled()
        else "disabled (VISAGE_OCR_ENABLED)",
        "faces": "ready" if identities.loaded() else "configured",
        "blocked_terms": BlockedTerm.objects.filter(active=True).count(),
        "protected_identities": ProtectedIdentity.objects.filter(active=True).count(),
        "known_bad_hashes": ModerationRecord.objects.filter(known_bad=True).count(),
    }
