"""The landing page's before/after examples, made by Visage's own engine from public-domain photos.

Made once per installation by `manage.py visage_examples` (`make run` on its first start; the
`migrate` step of compose and Kubernetes after the migrations) and stored in the results bucket
under `site/examples/`, so every web pod shows the same files and nothing is made per request. The
landing page leaves the section out until they exist. Each example runs exactly as a job's image
step does (the worker's pipeline and settings), then gets the visible "AI-generated" mark and the
metadata label every result carries (no C2PA manifest: nobody downloads them as a result).

The photos in `example_photos/` are public domain, from scikit-image's data: `astronaut.jpg`
(Eileen Collins, NASA, "no known copyright restrictions") and `camera.png` (CC0, Lav Varshney).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from django.conf import settings
from django.core.cache import cache

from swap.types import SwapOptions
from webapp.jobs import engine
from webapp.media import aigc, storage

logger = logging.getLogger(__name__)

PHOTOS = Path(__file__).resolve().parent / "example_photos"
PREFIX = "site/examples/"
MANIFEST = PREFIX + "examples.json"
FACE_THUMB_PX = 240  # the source face is shown small beside the before/after pair
# The landing page shows the manifest as last read from S3 (kept in Django's cache); one older than
# this is read again in the background, so no visitor's request ever waits on S3.
SHOWN_CACHE_KEY = "visage:landing-examples"
SHOWN_FRESH_S = 300
SHOWN_KEEP_S = 7 * 86400


@dataclass(frozen=True)
class Example:
    slug: str
    caption: str
    source: str  # a file in example_photos/
    target: str
    mode: str = "hq"


EXAMPLES = (
    Example(
        slug="cameraman",
        caption="The astronaut’s face in the cameraman’s photo, kept black and white as the photo is.",
        source="astronaut.jpg",
        target="camera.png",
    ),
)


def inputs_digest() -> str:
    """What the examples are made from: a change (new photos, captions, modes) makes them again."""
    digest = hashlib.sha256()
    for example in EXAMPLES:
        digest.update(repr(example).encode())
        for name in (example.source, example.target):
            digest.update((PHOTOS / name).read_bytes())
    return digest.hexdigest()


def _read(name: str) -> np.ndarray:
    image = cv2.imread(str(PHOTOS / name), cv2.IMREAD_COLOR)  # grey photos as 3 equal channels
    if image is None:
        raise FileNotFoundError(PHOTOS / name)
    return image


def _jpeg(image: np.ndarray, quality: int = 88) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("could not encode an example picture as JPEG")
    return data.tobytes()


def _thumb(image: np.ndarray, longest: int) -> np.ndarray:
    scale = longest / max(image.shape[:2])
    if scale >= 1:
        return image
    return cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


def current() -> bool:
    """Are stored examples there, made from today's photos and settings of them?"""
    stored = load()
    return stored is not None and stored.get("inputs") == inputs_digest()


def make() -> dict:
    """Make the examples with the engine and store them (pictures, then the manifest)."""
    digest = inputs_digest()
    pipeline = engine.get_pipeline()
    mark = aigc.visible_mark()
    made = []
    for example in EXAMPLES:
        source, target = _read(example.source), _read(example.target)
        started = time.monotonic()
        result = pipeline.swap_image(source, target, SwapOptions(mode=example.mode))
        seconds = time.monotonic() - started
        after = mark.apply(result.image) if mark else result.image
        content_id = uuid.uuid5(uuid.NAMESPACE_URL, f"visage:example:{example.slug}")
        files = {
            "face": _jpeg(_thumb(source, FACE_THUMB_PX)),
            "before": _jpeg(target),
            "after": aigc.encode_labelled(after, fmt="jpeg", job_id=content_id, quality=88),
        }
        for which, data in files.items():
            storage.put_bytes(settings.S3_RESULTS_BUCKET, f"{PREFIX}{example.slug}-{which}.jpg", data, "image/jpeg")
        height, width = target.shape[:2]
        made.append(
            {
                "slug": example.slug,
                "caption": example.caption,
                "mode": result.mode,
                "swapper": result.swapper,
                "seconds": round(seconds, 1),
                "width": width,
                "height": height,
            }
        )
    manifest = {"inputs": digest, "examples": made}
    storage.put_bytes(settings.S3_RESULTS_BUCKET, MANIFEST, json.dumps(manifest).encode(), "application/json")
    _remember_shown(manifest)
    return manifest


def load() -> dict | None:
    """The stored manifest, or None before the examples were made."""
    try:
        return json.loads(storage.get_bytes(settings.S3_RESULTS_BUCKET, MANIFEST))
    except storage.ObjectMissing:
        return None


def shown() -> list[dict]:
    """The examples for the landing page, without waiting on S3: as last read (none before the
    first read), read again in the background once older than SHOWN_FRESH_S."""
    remembered = cache.get(SHOWN_CACHE_KEY)  # fails open: a miss while Redis is down
    if remembered is None or time.time() - remembered["read_at"] > SHOWN_FRESH_S:
        _refresh_in_background()
    return remembered["examples"] if remembered else []


_refresh_lock = threading.Lock()
_refresh_thread: threading.Thread | None = None


def _refresh_in_background() -> None:
    global _refresh_thread
    with _refresh_lock:
        if _refresh_thread is not None and _refresh_thread.is_alive():
            return  # one read at a time per process
        _refresh_thread = threading.Thread(target=refresh, name="landing-examples", daemon=True)
        _refresh_thread.start()


def refresh_join(timeout_s: float | None = None) -> None:
    """Wait for a background read started by `shown()` (tests)."""
    thread = _refresh_thread
    if thread is not None:
        thread.join(timeout_s)


def refresh() -> None:
    """Read the manifest from S3 now and remember it for the landing page; logged when S3 fails."""
    try:
        manifest = load()
    except storage.StorageError as exc:
        logger.warning("landing examples: could not read them (%s); showing what was last read", exc)
        return
    _remember_shown(manifest)


def _remember_shown(manifest: dict | None) -> None:
    examples = manifest["examples"] if manifest else []
    cache.set(SHOWN_CACHE_KEY, {"examples": examples, "read_at": time.time()}, SHOWN_KEEP_S)


def image(slug: str, which: str) -> bytes:
    """One stored picture of an example (ObjectMissing when it was not made)."""
    if which not in ("face", "before", "after") or slug not in {e.slug for e in EXAMPLES}:
        raise storage.ObjectMissing(f"no example picture {slug}/{which}")
    return storage.get_bytes(settings.S3_RESULTS_BUCKET, f"{PREFIX}{slug}-{which}.jpg")
