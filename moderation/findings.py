"""What one check concluded about one image: the plain value detectors return and verdicts store."""

from __future__ import annotations

from dataclasses import dataclass, field

# How bad an outcome is; a verdict takes the worst of its findings. Also orders screening
# decisions (allow < review < reject) wherever two outcomes are combined.
SEVERITY = {"pass": 0, "allow": 0, "disabled": 0, "skipped": 0, "review": 1, "error": 1, "reject": 2}


@dataclass
class Finding:
    check: str  # nsfw, clip, ocr, identity, face_presence, known_hash
    role: str  # source, target, output, frame 3
    outcome: str  # pass | review | reject | disabled | skipped | error
    score: float | None = None
    threshold: float | None = None
    code: str = ""  # the user-facing reject code, when this finding rejects
    message: str = ""  # user-facing, non-graphic
    detail: dict = field(default_factory=dict)  # classes that fired, matched terms, … (never pixels)
    elapsed_ms: float = 0.0

    @property
    def severity(self) -> int:
        return SEVERITY[self.outcome]
