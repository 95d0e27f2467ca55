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


def known_bad_match(*, sha256: str, phash: str) -> tuple[ModerationRecord, int] | None:
    """A rejected image this one is (sha256) or looks like (pHash within the threshold), with the distance."""
    exact = ModerationRecord.objects.filter(known_bad=True, sha256=sha256).order_by("created_at").first()
    if exact is not None:
        return exact, 0
    known = list(
        ModerationRecord.objects.filter(known_bad=True, known_bad_code="content_rejected").values_list(
            "id", "phash"
        )
    )
    hit = hashes.nearest(phash, [h for _, h in known])
    if hit is None or hit[1] > conf.phash_max_distance():
        return None
    return ModerationRecord.objects.get(id=known[hit[0]][0]), hit[1]


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
