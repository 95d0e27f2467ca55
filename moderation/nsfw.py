"""NSFW detector: NudeNet's 320n YOLOv8 model, run through our own onnxruntime session.

Pre- and post-processing follow nudenet/nudenet.py (3.4) exactly — pad to a square at the
bottom/right, resize to 320, scale to [0, 1], the same channel order; decode rows of
(cx, cy, w, h, 18 class scores), keep >= 0.2, NMS 0.25/0.45 — so its scores mean what NudeNet's
mean. Running it through swap.inference.sessions.get_session gives one session per process, counted like
every other model. The model takes a batch: all images of a job (or a clip's sampled frames) go
through one session run, each decoded on its own, as if it had run alone.

Uploaded photos are remembered by their SHA-256 (`check_many(..., sha256s=...)`): the detections
of the same bytes under the same model file are kept in the cache (Redis) for MEMO_TTL_S, so a
user's selfie swapped into one target after another runs the detector once, not once a job
(~65 ms of CPU on the 2-core CI machine). Only labels, scores and boxes are kept, never pixels;
thresholds are applied afresh each time. The cache failing open (Redis down) runs the detector.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from django.core.cache import cache

from swap.config import RuntimeOptions
from swap.inference.sessions import get_session

from . import conf
from .findings import SEVERITY, Finding

LABELS = (
    "FEMALE_GENITALIA_COVERED",
    "FACE_FEMALE",
    "BUTTOCKS_EXPOSED",
    "FEMALE_BREAST_EXPOSED",
    "FEMALE_GENITALIA_EXPOSED",
    "MALE_BREAST_EXPOSED",
    "ANUS_EXPOSED",
    "FEET_EXPOSED",
    "BELLY_COVERED",
    "FEET_COVERED",
    "ARMPITS_COVERED",
    "ARMPITS_EXPOSED",
    "FACE_MALE",
    "BELLY_EXPOSED",
    "MALE_GENITALIA_EXPOSED",
    "ANUS_COVERED",
    "FEMALE_BREAST_COVERED",
    "BUTTOCKS_COVERED",
)
INPUT_SIZE = 320
MIN_SCORE = 0.2  # NudeNet drops rows below this before NMS
NMS_SCORE, NMS_IOU = 0.25, 0.45
MAX_BATCH = 16  # a long clip's sampled frames go in runs of at most this many (~20 MB of input)
MEMO_TTL_S = 7 * 24 * 3600  # how long a photo's detections are remembered by its SHA-256
MEMO_VERSION = 1  # bump when preprocess or decode change what the same model file detects


@dataclass(frozen=True)
class Detection:
    label: str
    score: float
    box: tuple[int, int, int, int]  # x, y, w, h in image pixels


def preprocess(image_bgr: np.ndarray, size: int = INPUT_SIZE) -> np.ndarray:
    """(1, 3, size, size) float32, as NudeNet builds it: the picture padded with black to a square
    at the bottom and right, resized to `size` (bilinear), scaled to [0, 1].

    Bit for bit that (`square_preprocess`, literally NudeNet's steps), without building the square:
    only the picture's part of it is resized, at the square's own scale, and the rest of the input
    is black as the square's padding makes it. OpenCV's bilinear resize takes each output pixel from
    the two input rows and columns round (i + 0.5) x scale - 0.5, so at the same scale (the same
    double: side / size and the part's side / its output side are the same fraction) every output
    pixel of the part is the square's, and the output past the part samples only padding. The part
    is the picture rounded up to whole steps of side / gcd(side, size) pixels (a 4032x3024 photo:
    steps of 63, no padding at all; a side with no factor in common with `size`: the whole square,
    as before). A 12 MP photo 16.5 -> 0.9 ms, a 720p picture 1.2 -> 0.6 ms (the square was ~49 MB
    and ~5 MB of copying)."""
    # NudeNet converts with COLOR_RGBA2BGR (which swaps R and B of a 3-channel image) and then
    # blobFromImage(swapRB=True) swaps them back: the model is fed BGR. Keep that, not "fix" it.
    image = image_bgr[:, :, :3] if image_bgr.shape[2] == 4 else image_bgr
    height, width = image.shape[:2]
    side = max(height, width)
    if side <= size:  # enlarged: small enough to pad as NudeNet does
        return square_preprocess(image, size)
    step = side // math.gcd(side, size)  # input pixels that span a whole number of output pixels
    part_h, part_w = -(-height // step) * step, -(-width // step) * step
    if (part_h, part_w) != (height, width):
        image = cv2.copyMakeBorder(image, 0, part_h - height, 0, part_w - width, cv2.BORDER_CONSTANT, value=0)
    out_h, out_w = part_h * size // side, part_w * size // side
    resized = cv2.resize(image, (out_w, out_h), interpolation=cv2.INTER_LINEAR)
    blob = np.zeros((1, 3, size, size), np.float32)
    blob[0, :, :out_h, :out_w] = resized.transpose(2, 0, 1)
    blob /= 255.0
    return blob


def square_preprocess(image_bgr: np.ndarray, size: int = INPUT_SIZE) -> np.ndarray:
    """NudeNet's own steps, literally: pad to the square, resize, scale (what `preprocess` equals)."""
    image = image_bgr[:, :, :3] if image_bgr.shape[2] == 4 else image_bgr
    height, width = image.shape[:2]
    side = max(height, width)
    padded = cv2.copyMakeBorder(image, 0, side - height, 0, side - width, cv2.BORDER_CONSTANT, value=0)
    resized = cv2.resize(padded, (size, size), interpolation=cv2.INTER_LINEAR)
    return np.ascontiguousarray(resized.transpose(2, 0, 1)[None].astype(np.float32) / 255.0)


def decode(output: np.ndarray, width: int, height: int, size: int = INPUT_SIZE) -> list[Detection]:
    """Rows of (cx, cy, w, h, class scores…) in model pixels → detections in image pixels after NMS."""
    rows = np.squeeze(output, 0).T  # (anchors, 4 + classes)
    class_scores = rows[:, 4:]
    best = class_scores.max(axis=1)
    keep = best >= MIN_SCORE
    if not keep.any():
        return []
    rows, best, class_ids = rows[keep], best[keep], class_scores[keep].argmax(axis=1)
    scale = max(width, height) / size  # the padded square back to image pixels
    cx, cy, w, h = (rows[:, i] * scale for i in range(4))
    x = np.clip(cx - w / 2, 0, width)
    y = np.clip(cy - h / 2, 0, height)
    w = np.minimum(w, width - x)
    h = np.minimum(h, height - y)
    boxes = np.stack([x, y, w, h], axis=1)
    indices = cv2.dnn.NMSBoxes(boxes.tolist(), best.tolist(), NMS_SCORE, NMS_IOU)
    return [
        Detection(LABELS[int(class_ids[i])], float(best[i]), tuple(int(v) for v in boxes[i]))
        for i in np.array(indices).ravel()
    ]


class NsfwDetector:
    """One session per model file and process; `calls` proves when screening skipped the model."""

    def __init__(self, model_path: Path) -> None:
        threads = conf.moderation_threads()
        self.model_path = model_path
        self.session = get_session(model_path, _cpu_options(threads))
        # One picture (a photo job's target, its result) runs on the calling thread: spread over a
        # pool it took 14 instead of 22 ms but 24.4 instead of 21.9 ms of CPU (a 720p picture, 2
        # cores), and a worker's jobs, not one picture, are what keeps the cores busy. A batch (a
        # clip's sampled frames) is worth the pool: 16 frames cost the same CPU either way (22.8 and
        # 22.6 ms a frame) in about half the time.
        self.one_picture_session = self.session if threads == 1 else get_session(model_path, _cpu_options(1))
        self.input_name = self.session.get_inputs()[0].name
        self.calls = 0
        with model_path.open("rb") as model_file:
            self.model_sha256 = hashlib.file_digest(model_file, "sha256").hexdigest()

    def memo_key(self, sha256: str) -> str:
        """Where the detections of the photo with this SHA-256 are remembered (this model file)."""
        return f"visage:nsfw:v{MEMO_VERSION}:{self.model_sha256[:16]}:{sha256}"

    def detect(self, image_bgr: np.ndarray) -> list[Detection]:
        return self.detect_many([image_bgr])[0]

    def detect_many(self, images_bgr: list[np.ndarray]) -> list[list[Detection]]:
        """Each image's detections, from one session run per MAX_BATCH images (`calls` counts runs)."""
        detected: list[list[Detection]] = []
        for first in range(0, len(images_bgr), MAX_BATCH):
            chunk = images_bgr[first : first + MAX_BATCH]
            self.calls += 1
            batch = np.concatenate([preprocess(image) for image in chunk])
            session = self.one_picture_session if len(chunk) == 1 else self.session
            (output,) = session.run(None, {self.input_name: batch})[:1]
            detected += [
                decode(output[i : i + 1], image.shape[1], image.shape[0]) for i, image in enumerate(chunk)
            ]
        return detected


def _cpu_options(threads: int) -> RuntimeOptions:
    return RuntimeOptions(providers=("CPUExecutionProvider",), intra_op_threads=threads)


_detector: NsfwDetector | None = None
_lock = threading.Lock()


def get_detector() -> NsfwDetector:
    global _detector
    path = conf.nsfw_model_path().resolve()
    with _lock:
        if _detector is None or _detector.model_path != path:
            _detector = NsfwDetector(path)
        return _detector


def loaded() -> bool:
    return _detector is not None


def check(image_bgr: np.ndarray, *, role: str) -> Finding:
    """The worst thresholded class decides; every flagged class is recorded with its score."""
    return check_many([image_bgr], roles=[role])[0]


def check_many(
    images_bgr: list[np.ndarray], *, roles: list[str], sha256s: Sequence[str | None] | None = None
) -> list[Finding]:
    """`check` for each image, in one detector run; each finding carries its share of the time.

    `sha256s`: per image, the SHA-256 of the uploaded bytes it was decoded from (None: not a photo
    upload, e.g. a video frame): detections remembered for those bytes are reused (the finding says
    `reused`), the others' detections are remembered."""
    detector = get_detector()
    keys = [detector.memo_key(sha) if sha else None for sha in (sha256s or [None] * len(images_bgr))]
    remembered = cache.get_many([key for key in keys if key])
    detected: list[list[Detection] | None] = [
        _detections_from_memo(remembered[key]) if key in remembered else None for key in keys
    ]
    todo = [i for i, found in enumerate(detected) if found is None]
    reused = {i for i in range(len(detected)) if i not in todo}
    elapsed_ms = 0.0
    if todo:
        started = time.perf_counter()
        for i, found in zip(todo, detector.detect_many([images_bgr[i] for i in todo]), strict=True):
            detected[i] = found
        elapsed_ms = (time.perf_counter() - started) * 1000 / len(todo)
        cache.set_many(
            {keys[i]: _detections_to_memo(detected[i]) for i in todo if keys[i]}, timeout=MEMO_TTL_S
        )
    findings = []
    for i, (detections, role) in enumerate(zip(detected, roles, strict=True)):
        finding = _finding(detections, role=role, elapsed_ms=0.0 if i in reused else elapsed_ms)
        if i in reused:
            finding.detail["reused"] = True
        findings.append(finding)
    return findings


def _detections_to_memo(detections: list[Detection]) -> str:
    return json.dumps([[d.label, d.score, *d.box] for d in detections], separators=(",", ":"))


def _detections_from_memo(text: str) -> list[Detection] | None:
    """The remembered detections, or None (run the detector) when the entry is not ours."""
    try:
        rows = json.loads(text)
        return [Detection(label, float(score), (int(x), int(y), int(w), int(h))) for label, score, x, y, w, h in rows]
    except (TypeError, ValueError):
        return None


def _finding(detections: list[Detection], *, role: str, elapsed_ms: float) -> Finding:
    bands = conf.nsfw_thresholds()
    top: dict[str, float] = {}
    for detection in detections:
        if detection.label in bands:
            top[detection.label] = max(top.get(detection.label, 0.0), detection.score)
    fired = {}
    for label, score in top.items():
        if bands[label].outcome(score) != "pass":
            fired[label] = {
                "score": round(score, 4),
                "review": bands[label].review,
                "reject": bands[label].reject,
            }
    # The worst class decides: highest outcome first, then highest score (also when nothing fired,
    # so the audit shows the closest call).
    worst_label = max(
        top, key=lambda label: (SEVERITY[bands[label].outcome(top[label])], top[label]), default=""
    )
    worst_score = top.get(worst_label, 0.0)
    outcome = bands[worst_label].outcome(worst_score) if worst_label else "pass"
    band = bands.get(worst_label)
    return Finding(
        check="nsfw",
        role=role,
        outcome=outcome,
        score=round(worst_score, 4),
        threshold=(band.reject if outcome == "reject" else band.review) if band else None,
        code="content_rejected" if outcome == "reject" else "",
        detail={"fired": fired, "top_class": worst_label, "detections": len(detections)},
        elapsed_ms=elapsed_ms,
    )
