"""Moderation services — PASS-THROUGH PLACEHOLDER until the moderation issue (#4) lands.

The platform calls exactly these two functions; the real detectors replace the bodies.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass


@dataclass(frozen=True)
class ScreeningOutcome:
    decision: str  # "allow" | "review" | "reject"
    code: str = ""  # machine code for a reject, e.g. "content_rejected"
    message: str = ""  # shown to the user


def screen_inputs(*, subject_id: uuid.UUID, source: bytes, target: bytes, target_kind: str) -> ScreeningOutcome:
    return ScreeningOutcome("allow")


def screen_output(*, subject_id: uuid.UUID, data: bytes) -> ScreeningOutcome:
    return ScreeningOutcome("allow")
