"""CLIP zero-shot check (open_clip): image embedding against configured prompts, softmax per image.

Only runs with a local checkpoint (VISAGE_CLIP_CHECKPOINT): nothing is downloaded at run time.
Without one the check is reported as DISABLED in every verdict and in /healthz — never as passed.
The prompt embeddings are computed once, when the model loads.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from swap.inference.sessions import record_model_load

from . import conf
from .findings import SEVERITY, Finding

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClipKey:
    model_name: str
    checkpoint: str
    config_path: str
    prompts: tuple[str, ...]


class ClipClassifier:
    def __init__(self, key: ClipKey) -> None:
        import open_clip  # noqa: PLC0415 - the moderation extra, absent from the web image; torch + open_clip ~2.8 s
        import torch  # noqa: PLC0415 - the same: loaded by open_clip above, named here for inference_mode

        if key.config_path:
            open_clip.add_model_config(key.config_path)  # a custom architecture, e.g. a distilled tower
        self.key = key
        self.torch = torch
        model, _, preprocess = open_clip.create_model_and_transforms(
            key.model_name, pretrained=key.checkpoint
        )
        self.model = model.eval()
        self.preprocess = preprocess
        tokenizer = open_clip.get_tokenizer(key.model_name)
        with torch.inference_mode():
            text = self.model.encode_text(tokenizer(list(key.prompts)))
            self.text_features = text / text.norm(dim=-1, keepdim=True)
        self.calls = 0
        record_model_load(f"clip:{key.model_name}")

    def probabilities(self, image_bgr: np.ndarray) -> dict[str, float]:
        return self.probabilities_many([image_bgr])[0]

    def probabilities_many(self, images_bgr: list[np.ndarray]) -> list[dict[str, float]]:
        """Prompt probabilities per image, in one forward pass over all of them."""
        self.calls += 1
        pixels = self.torch.stack(
            [self.preprocess(Image.fromarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))) for image in images_bgr]
        )
        with self.torch.inference_mode():
            image = self.model.encode_image(pixels)
            image = image / image.norm(dim=-1, keepdim=True)
            logits = self.model.logit_scale.exp() * image @ self.text_features.T
            probs = logits.softmax(dim=-1).tolist()
        return [dict(zip(self.key.prompts, row, strict=True)) for row in probs]


_classifier: ClipClassifier | None = None
_error: tuple[ClipKey, str] | None = None  # the last load failure, for the configuration that failed
_lock = threading.Lock()


def _key() -> ClipKey:
    return ClipKey(
        conf.clip_model_name(), conf.clip_checkpoint(), conf.clip_config_path(), tuple(conf.clip_prompts())
    )


def status() -> str:
    """'disabled: …', 'error: …', 'ready' (loaded) or 'configured' (loads on first use)."""
    key = _key()
    if not key.checkpoint:
        return "disabled: no checkpoint configured (VISAGE_CLIP_CHECKPOINT)"
    if not Path(key.checkpoint).is_file():
        return f"error: checkpoint {key.checkpoint} does not exist"
    if _classifier is not None and _classifier.key == key:
        return "ready"
    if _error is not None and _error[0] == key:
        return f"error: {_error[1]}"
    return "configured"


def get_classifier() -> ClipClassifier | None:
    """The loaded classifier, None when CLIP is disabled. Raises if configured but unloadable."""
    global _classifier, _error
    key = _key()
    if not key.checkpoint:
        return None
    with _lock:
        if _classifier is None or _classifier.key != key:
            try:
                _classifier = ClipClassifier(key)
                _error = None
            except Exception as exc:
                _error = (key, f"{type(exc).__name__}: {exc}")
                logger.exception("CLIP model %s could not be loaded", key.model_name)
                raise
        return _classifier


def check(image_bgr: np.ndarray, *, role: str) -> Finding:
    return check_many([image_bgr], roles=[role])[0]


def check_many(images_bgr: list[np.ndarray], *, roles: list[str]) -> list[Finding]:
    """`check` for each image, in one forward pass; each finding carries its share of the time.
    Disabled or unloadable: one such finding (the verdict needs the line once)."""
    started = time.perf_counter()
    try:
        classifier = get_classifier()
    except Exception:  # noqa: BLE001 - configured but broken: hold for a human rather than pass unchecked
        return [
            Finding(
                check="clip",
                role=roles[0],
                outcome="error",
                message="CLIP check failed to load",
                detail={"status": status()},
                elapsed_ms=(time.perf_counter() - started) * 1000,
            )
        ]
    if classifier is None:
        return [Finding(check="clip", role=roles[0], outcome="disabled", detail={"status": status()})]
    probabilities = classifier.probabilities_many(images_bgr)
    elapsed_ms = (time.perf_counter() - started) * 1000 / len(images_bgr)
    return [
        _finding(probs, role=role, model=classifier.key.model_name, elapsed_ms=elapsed_ms)
        for probs, role in zip(probabilities, roles, strict=True)
    ]


def _finding(probs: dict[str, float], *, role: str, model: str, elapsed_ms: float) -> Finding:
    bands = conf.clip_prompts()
    worst = ("pass", 0.0, "")
    for prompt, prob in probs.items():
        band = bands.get(prompt)
        if band is None:
            continue
        outcome = band.outcome(prob)
        if (SEVERITY[outcome], prob) > (SEVERITY[worst[0]], worst[1]):
            worst = (outcome, prob, prompt)
    outcome, score, prompt = worst
    band = bands.get(prompt) if prompt else None
    return Finding(
        check="clip",
        role=role,
        outcome=outcome,
        score=round(score, 4),
        threshold=(band.reject if outcome == "reject" else band.review) if band else None,
        code="content_rejected" if outcome == "reject" else "",
        detail={
            "prompt": prompt,
            "probabilities": {p: round(v, 4) for p, v in probs.items()},
            "model": model,
        },
        elapsed_ms=elapsed_ms,
    )
