"""Moderation thresholds and model locations.

Every value is a Django setting of the same name, parsed from the environment once by
`webapp/settings.py` with the project's one env parser (a typo in a boolean stops the process
instead of becoming False); read here at call time so tests can change them with pytest-django's
`settings` fixture. Blocked terms and protected identities are data, edited in the admin.

| variable | default | meaning |
|---|---|---|
| VISAGE_NSFW_MODEL | nudenet's bundled 320n.onnx | NSFW detector (NudeNet interface) |
| VISAGE_NSFW_THRESHOLDS | see NSFW_DEFAULTS | JSON {class: [review, reject]}, merged over the defaults |
| VISAGE_CLIP_MODEL | ViT-B-32 | open_clip model name |
| VISAGE_CLIP_CHECKPOINT | "" | local checkpoint file; empty = CLIP check DISABLED |
| VISAGE_CLIP_CONFIG | "" | optional open_clip model-config JSON for a custom architecture |
| VISAGE_CLIP_PROMPTS | see CLIP_DEFAULTS | JSON {prompt: {"review": p, "reject": p} or null} |
| VISAGE_OCR_ENABLED | true | run the OCR blocked-text check |
| VISAGE_OCR_MAX_SIDE | 480 | longest side (px) the text detector sees |
| VISAGE_OCR_ON_SOURCE | false | also OCR the source (only its face reaches the result) |
| VISAGE_OCR_MIN_SCORE | 0.5 | recogniser confidence below which text is ignored |
| VISAGE_IDENTITY_MAX_DISTANCE | 0.55 | dlib128 Euclidean distance to a protected face that rejects (same person 0.34–0.50, others 0.67+) |
| VISAGE_IDENTITY_MAX_COSINE_DISTANCE | 0.6 | the same for arcface512 embeddings (1 - cos) |
| VISAGE_MIN_FACE_PX | 40 | shorter side of the smallest usable source face |
| VISAGE_PHASH_MAX_DISTANCE | 6 | Hamming distance (of 64 bits) that counts as known-bad content |
| VISAGE_MODERATION_THREADS | 0 | onnxruntime intra-op threads for moderation models' batches (0 = all; one picture: 1) |
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# [review, reject] per NudeNet class; classes not listed are never flagged (faces, covered parts).
NSFW_DEFAULTS: dict[str, tuple[float, float]] = {
    "FEMALE_GENITALIA_EXPOSED": (0.30, 0.50),
    "MALE_GENITALIA_EXPOSED": (0.30, 0.50),
    "ANUS_EXPOSED": (0.30, 0.50),
    "FEMALE_BREAST_EXPOSED": (0.35, 0.60),
    "BUTTOCKS_EXPOSED": (0.40, 0.65),
}

# Softmax probabilities over the prompts; a prompt mapped to None is a neutral "anything else" class.
CLIP_DEFAULTS: dict[str, dict[str, float] | None] = {
    "explicit sexual content": {"review": 0.35, "reject": 0.70},
    "graphic violence": {"review": 0.35, "reject": 0.70},
    "a photo of a child": {"review": 0.50},
    "an ordinary photo": None,
}


@dataclass(frozen=True)
class Band:
    """A score at or above `review` holds for a moderator; at or above `reject` rejects."""

    review: float | None
    reject: float | None

    def outcome(self, score: float) -> str:
        if self.reject is not None and score >= self.reject:
            return "reject"
        if self.review is not None and score >= self.review:
            return "review"
        return "pass"


def nsfw_model_path() -> Path:
    if settings.VISAGE_NSFW_MODEL:
        return Path(settings.VISAGE_NSFW_MODEL)
    # nudenet ships the model: find its folder without importing it (nudenet imports cv2 and more).
    spec = importlib.util.find_spec("nudenet")
    if spec is None:
        raise ModuleNotFoundError("No module named 'nudenet'", name="nudenet")
    return Path(spec.origin).resolve().parent / "320n.onnx"


def nsfw_thresholds() -> dict[str, Band]:
    merged = {label: Band(*band) for label, band in NSFW_DEFAULTS.items()}
    for label, (review, reject) in settings.VISAGE_NSFW_THRESHOLDS.items():
        merged[label] = Band(review, reject)
    return merged


def clip_model_name() -> str:
    return settings.VISAGE_CLIP_MODEL


def clip_checkpoint() -> str:
    return settings.VISAGE_CLIP_CHECKPOINT


def clip_config_path() -> str:
    return settings.VISAGE_CLIP_CONFIG


def clip_prompts() -> dict[str, Band | None]:
    prompts = settings.VISAGE_CLIP_PROMPTS or CLIP_DEFAULTS
    if len(prompts) < 2:
        raise ImproperlyConfigured(
            "VISAGE_CLIP_PROMPTS needs at least two prompts (softmax over one is always 1)"
        )
    return {
        prompt: None if band is None else Band(band.get("review"), band.get("reject"))
        for prompt, band in prompts.items()
    }


def ocr_enabled() -> bool:
    return settings.VISAGE_OCR_ENABLED


def ocr_max_side() -> int:
    return settings.VISAGE_OCR_MAX_SIDE


def ocr_on_source() -> bool:
    return settings.VISAGE_OCR_ON_SOURCE


def ocr_min_score() -> float:
    return settings.VISAGE_OCR_MIN_SCORE


def identity_max_distance(kind: str) -> float:
    if kind == "arcface512":
        return settings.VISAGE_IDENTITY_MAX_COSINE_DISTANCE
    return settings.VISAGE_IDENTITY_MAX_DISTANCE


def min_face_px() -> int:
    return settings.VISAGE_MIN_FACE_PX


def phash_max_distance() -> int:
    return settings.VISAGE_PHASH_MAX_DISTANCE


def moderation_threads() -> int:
    return settings.VISAGE_MODERATION_THREADS
