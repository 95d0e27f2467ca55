"""Moderation writes: screening (inputs, sampled video frames, the output). Reviews and protected
identities are recorded in reviews.py, takedown reports in takedowns.py.

The platform calls `screen_inputs` on the CPU `moderation` queue before any GPU work and
`screen_output` on the finished result; it maps the outcome to job states (allow → GPU queue,
review → waits for a moderator, reject → rejected, credits released, uploads deleted).
Checks run cheapest first and stop at the first reject; every check that ran (or was disabled)
is recorded on the Verdict, every image gets an audit ModerationRecord (hashes and scores only).
"""

from __future__ import annotations

import io
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext_noop

from swap.errors import InvalidImage
from swap.image_io import SOURCE_PHOTOS, decode_image
from swap.types import Face
from swap.video import io as video_io

from . import clip, conf, hashes, identities, nsfw, ocr, selectors, signals
from .choices import Decision, Stage
from .findings import SEVERITY, Finding
from .models import CheckResult, ModerationRecord, Verdict

logger = logging.getLogger(__name__)

# (position of the image in screen_inputs' order: source, extra sources, target; its decoded BGR
# pixels; whether identity checks need every face embedded, i.e. protected identities exist) ->
# every face in it, largest first, embedded by the moderation analyser's pipeline where asked.
FacesFor = Callable[[int, np.ndarray, bool], list[Face]]

# Reasons that make an image "known bad" (a re-upload is rejected by hash). A missing face is not.
CONTENT_CODES = frozenset({"content_rejected", "protected_identity", "blocked_text"})
# Stored in English (workers answer no request) and read in the user's language: gettext_noop marks
# every whole sentence for the catalogue, the site and the API translate the stored text.
REVIEW_MESSAGE = gettext_noop("Your job is waiting for a quick review by our moderators; it continues once approved.")
OUTPUT_REVIEW_MESSAGE = gettext_noop(
    "Your result is waiting for a quick review by our moderators before it is shown."
)
REVIEW_REJECT_MESSAGE = gettext_noop(
    "Our moderators could not approve this content under our content policy, so the job "
    "was not processed. No credits were charged."
)
REJECT_MESSAGES = {
    ("content_rejected", "source"): gettext_noop(
        "The source image appears to contain content our content policy doesn't allow, so this job was not "
        "processed. No credits were charged."
    ),
    ("content_rejected", "target"): gettext_noop(
        "The target image appears to contain content our content policy doesn't allow, so this job was not "
        "processed. No credits were charged."
    ),
    ("content_rejected", "output"): gettext_noop(
        "The output image appears to contain content our content policy doesn't allow, so this job was not "
        "processed. No credits were charged."
    ),
    ("protected_identity", "source"): gettext_noop(
        "The source image shows a person who can't be used in face swaps on this service, so this job was not "
        "processed. No credits were charged."
    ),
    ("protected_identity", "target"): gettext_noop(
        "The target image shows a person who can't be used in face swaps on this service, so this job was not "
        "processed. No credits were charged."
    ),
    ("protected_identity", "output"): gettext_noop(
        "The output image shows a person who can't be used in face swaps on this service, so this job was not "
        "processed. No credits were charged."
    ),
    ("blocked_text", "source"): gettext_noop(
        "The source image contains text our content policy doesn't allow, so this job was not processed. "
        "No credits were charged."
    ),
    ("blocked_text", "target"): gettext_noop(
        "The target image contains text our content policy doesn't allow, so this job was not processed. "
        "No credits were charged."
    ),
    ("blocked_text", "output"): gettext_noop(
        "The output image contains text our content policy doesn't allow, so this job was not processed. "
        "No credits were charged."
    ),
}
REJECT_FALLBACK = gettext_noop("This content could not be accepted. No credits were charged.")


def _reject_message(code: str, role: str) -> str:
    if (code, role) in REJECT_MESSAGES:
        return REJECT_MESSAGES[(code, role)]
    image = f"{role} image" if role in ("source", "target", "output") else role
    return {
        "content_rejected": f"The {image} appears to contain content our content policy doesn't allow, so this job "
        "was not processed. No credits were charged.",
        "protected_identity": f"The {image} shows a person who can't be used in face swaps on this service, so this "
        "job was not processed. No credits were charged.",
        "blocked_text": f"The {image} contains text our content policy doesn't allow, so this job was not "
        "processed. No credits were charged.",
    }.get(code, REJECT_FALLBACK)


@dataclass(frozen=True)
class ScreeningOutcome:
    decision: str  # "allow" | "review" | "reject"
    code: str = ""  # machine code for a reject, e.g. "content_rejected"
    message: str = ""  # shown to the user


@dataclass(frozen=True)
class DecodedPhoto:
    """A source photo its caller already holds decoded (BGR, as image_io.decode_image makes it), with
    the SHA-256 hex digest of the bytes it was decoded from: screened without reading them again."""

    pixels: np.ndarray
    sha256: str


@dataclass
class _Image:
    role: str
    pixels: np.ndarray  # BGR
    sha256: str
    phash: str = ""
    dhash: str = ""
    matched_record_id: int | None = None

    def __post_init__(self) -> None:
        self.phash, self.dhash = hashes.phash_dhash(self.pixels)


# --- public entry points -------------------------------------------------------------------------


def screen_inputs(
    *,
    subject_id: uuid.UUID,
    source: bytes | DecodedPhoto,
    target: bytes | None,
    extra_sources: Sequence[bytes | DecodedPhoto] = (),
    faces_for: FacesFor | None = None,
) -> ScreeningOutcome:
    """The source photo(s) and a photo target. `target=None` screens the sources alone (a video
    target goes through `screen_video_inputs`). Every source photo gets every check (each must
    show a usable face, none a protected person), whether it comes as bytes or decoded.

    `faces_for` lets the caller supply each image's faces (the platform analyses every input once
    for the whole job and keeps the analysis for the GPU step); faces it returns without
    this analyser's embeddings are ignored and the image is analysed here, so no identity check is
    ever skipped."""
    started = time.perf_counter()
    try:
        images = [_source_image(photo) for photo in (source, *extra_sources)]
        if target is not None:
            images.append(_Image("target", _decode(target, "target"), hashes.sha256_hex(target)))
    except InvalidImage as exc:
        finding = Finding(
            check="decode", role=exc.which or "input", outcome="reject", code=exc.code, message=str(exc)
        )
        return _record(subject_id, Stage.INPUT, [], [finding], started)
    findings = _run_checks(images, with_faces=True, faces_for=faces_for)
    return _record(subject_id, Stage.INPUT, images, findings, started)


def screen_frames(
    *, subject_id: uuid.UUID, frames: list[np.ndarray], stage: str = Stage.FRAMES
) -> ScreeningOutcome:
    """Sampled video frames (BGR): every image check per frame; a face must appear in at least one.

    stage="output" screens frames of a finished video like `screen_output` (NSFW and known-bad
    hashes; anything flagged → review) and keeps its own verdict apart from the input frames'.
    """
    started = time.perf_counter()
    images = [
        _Image(f"frame {i}", frame, hashes.sha256_hex(np.ascontiguousarray(frame).tobytes()))
        for i, frame in enumerate(frames)
    ]
    if stage == Stage.OUTPUT:
        findings = _known_bad(images) or _nsfw_checks(images)
    else:
        findings = _run_checks(images, with_faces=True, frames=True)
    return _record(subject_id, stage, images, findings, started)


def screen_video_inputs(
    *,
    subject_id: uuid.UUID,
    source: bytes | DecodedPhoto,
    video: bytes,
    extra_sources: Sequence[bytes | DecodedPhoto] = (),
) -> ScreeningOutcome:
    """A video job's inputs: the source photo(s), then about one frame a second (at least 8) of the
    clip through `screen_frames`. The worse of the two outcomes decides."""
    photos = screen_inputs(subject_id=subject_id, source=source, target=None, extra_sources=extra_sources)
    if photos.decision == "reject":
        return photos
    frames = [frame for _, frame in video_io.sample_frames(io.BytesIO(video))]
    clip_outcome = screen_frames(subject_id=subject_id, frames=frames)
    return max((photos, clip_outcome), key=lambda outcome: SEVERITY[outcome.decision])


def screen_video_output(*, subject_id: uuid.UUID, frames: list[np.ndarray]) -> ScreeningOutcome:
    """Sampled frames of a finished video, like `screen_output` (anything flagged → review). The
    worker keeps them unmarked on their way to the encoder (swap.video.process_clip's `keep`)."""
    return screen_frames(subject_id=subject_id, frames=frames, stage=Stage.OUTPUT)


def screen_output(*, subject_id: uuid.UUID, pixels: np.ndarray) -> ScreeningOutcome:
    """The finished result (BGR, before the visible mark): NSFW detector (and known-bad hashes).
    Anything flagged → review. Screened as the worker holds it, not encoded and decoded again: the
    known-bad perceptual hash and the detector see the same picture either way, and the stored
    bytes differ per label and signature anyway (so their SHA-256 could match no record)."""
    started = time.perf_counter()
    image = _Image("output", pixels, hashes.sha256_hex(np.ascontiguousarray(pixels).tobytes()))
    findings = _known_bad([image])
    if not findings:
        findings = [nsfw.check(image.pixels, role="output")]
    return _record(subject_id, Stage.OUTPUT, [image], findings, started)


def subject_forget(*, subject_id: uuid.UUID) -> int:
    """A deleted job's allowed images are forgotten: their hashes (SHA-256, pHash, dHash) could still
    show that a person uploaded a given photo. What was rejected or marked known-bad stays, as the
    verdicts do (the audit of what was refused, and the hashes that refuse it again). How many."""
    deleted, _ = ModerationRecord.objects.filter(
        verdict__subject_id=subject_id, known_bad=False, decision=Decision.ALLOW
    ).delete()
    return deleted


def warm_up() -> dict[str, float]:
    """Load every configured model once, at worker start, so the first job doesn't pay for it.
    Returns the seconds each took (the worker prints them: where a slow start goes)."""
    frame = np.full((128, 128, 3), 127, np.uint8)
    took: dict[str, float] = {}

    def timed(name: str, load: Callable[[], object]) -> None:
        started = time.perf_counter()
        load()
        took[name] = time.perf_counter() - started

    timed("nsfw", lambda: nsfw.get_detector().detect(frame))
    timed("faces", lambda: identities.get_analyser().pipeline.warm_up())
    if conf.ocr_enabled():
        timed("ocr", lambda: ocr.get_reader().warm_up())
    try:
        classifier = clip.get_classifier()
        if classifier is not None:
            timed("clip", lambda: classifier.probabilities(frame))
    except Exception:  # reported by readiness_report; screening holds for review meanwhile
        logger.exception("CLIP is configured but could not be loaded")
    return took


# --- the checks --------------------------------------------------------------------------------


def _decode(data: bytes, which: str) -> np.ndarray:
    return decode_image(data, which=which, max_pixels=settings.MAX_IMAGE_PIXELS)


def _source_image(photo: bytes | DecodedPhoto) -> _Image:
    """A source photo, decoded once per process however many jobs it is swapped into."""
    if isinstance(photo, DecodedPhoto):
        return _Image("source", photo.pixels, photo.sha256)
    sha256 = hashes.sha256_hex(photo)
    pixels = SOURCE_PHOTOS.decode(photo, which="source", max_pixels=settings.MAX_IMAGE_PIXELS, sha256=sha256)
    return _Image("source", pixels, sha256)


def _rejected(findings: list[Finding]) -> bool:
    return any(f.outcome == "reject" for f in findings)


def _known_bad(images: list[_Image]) -> list[Finding]:
    findings = []
    matches = selectors.known_bad_matches([(image.sha256, image.phash) for image in images])
    for image, match in zip(images, matches, strict=True):
        if match is None:
            continue
        record, distance = match
        image.matched_record_id = record.id
        findings.append(
            Finding(
                check="known_hash",
                role=image.role,
                outcome="reject",
                score=float(distance),
                threshold=0.0 if record.sha256 == image.sha256 else None,
                code=record.known_bad_code or "content_rejected",  # the same reason, the same message
                detail={
                    "matched_record": record.id,
                    "by": "sha256" if record.sha256 == image.sha256 else "phash",
                },
            )
        )
    return findings


def _run_checks(
    images: list[_Image], *, with_faces: bool, frames: bool = False, faces_for: FacesFor | None = None
) -> list[Finding]:
    """Cheapest first; stop at the first reject (the rest would not change the decision).

    NSFW runs over all images in one batched detector call, CLIP likewise. OCR, the slowest check, then runs in
    a thread beside face analysis and CLIP: onnxruntime releases the GIL, so on two cores the pair
    costs roughly max(), not sum(). Each side looks at the other between images: a reject on one
    stops the other before its next image (the image in progress finishes).
    """
    findings = _known_bad(images)
    if findings:
        return findings  # previously rejected content: no model runs at all
    findings += _nsfw_checks(images, photos=not frames)
    if _rejected(findings):
        return findings
    terms = selectors.blocked_terms()
    faces_rejected, text_rejected = threading.Event(), threading.Event()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ocr") as pool:
        ocr_future = pool.submit(
            _ocr_checks,
            _ocr_subjects(images, frames=frames),
            terms,
            stop=faces_rejected,
            rejected=text_rejected,
        )
        if with_faces:
            findings += _face_checks(images, frames=frames, faces_for=faces_for, stop=text_rejected.is_set)
            if _rejected(findings):
                faces_rejected.set()
        if not _rejected(findings) and not text_rejected.is_set():
            findings += clip.check_many([image.pixels for image in images], roles=[image.role for image in images])
        findings += ocr_future.result()
    return findings


def _nsfw_checks(images: list[_Image], *, photos: bool = False) -> list[Finding]:
    """`photos`: the images are uploads whose `sha256` is of their bytes: the detector's findings
    for the same bytes are reused (nsfw.check_many)."""
    return nsfw.check_many(
        [image.pixels for image in images],
        roles=[image.role for image in images],
        sha256s=[image.sha256 for image in images] if photos else None,
    )


def _ocr_checks(
    subjects: list[_Image], terms: list[str], *, stop: threading.Event, rejected: threading.Event
) -> list[Finding]:
    """OCR per subject until one rejects (then `rejected` is set) or `stop` is set by the face checks."""
    findings = []
    for image in subjects:
        if stop.is_set():
            break
        findings.append(ocr.check(image.pixels, role=image.role, blocked_terms=terms))
        if _rejected(findings):
            rejected.set()
            break
    return findings


def _ocr_subjects(images: list[_Image], *, frames: bool) -> list[_Image]:
    if frames:  # text rarely changes between frames: first, middle and last are enough
        picks = sorted({0, len(images) // 2, len(images) - 1}) if images else []
        return [images[i] for i in picks]
    # Only the face of the source reaches the result; its background text never does.
    return [i for i in images if i.role != "source" or conf.ocr_on_source()]


def _face_checks(
    images: list[_Image],
    *,
    frames: bool,
    faces_for: FacesFor | None = None,
    stop: Callable[[], bool] = lambda: False,
) -> list[Finding]:
    """Identity (and, for photos, presence) per image; `stop()` true before an image means another
    check already rejected the job: the remaining images are not analysed.

    A video's frames with no protected identity to compare with: only whether a face appears is
    left to find (`_a_face_seen`: without embeddings, up to the first face), and each frame's
    identity check passes with no references, as it would after analysing it (a 30 s clip's 30
    frames: ~0.5 s of a screening's ~1.9 s). A photo's faces are embedded for the identity check
    only when a protected identity exists to compare them with (a target face's embedding: ~8 ms
    of a photo job's screening)."""
    analyser = identities.get_analyser()
    kind = analyser.embedding_kind
    protected = selectors.protected_vectors(kind=kind)
    if frames and not protected:
        seen = _a_face_seen(analyser, images, stop)
        if seen is None:
            return []
        findings = [identities.identity_check([], protected, role=image.role, kind=kind) for image in images]
        return [*findings, _video_face_presence(seen)]
    findings, any_face = [], False
    for position, image in enumerate(images):
        if stop():
            return findings
        started = time.perf_counter()
        faces = _faces(analyser, image, position, faces_for, kind, embed=bool(protected))
        any_face = any_face or bool(faces)
        identity = identities.identity_check(faces, protected, role=image.role, kind=kind)
        identity.elapsed_ms = (time.perf_counter() - started) * 1000  # detection + embedding included
        findings.append(identity)
        if not frames:
            findings.append(identities.presence_check(faces, role=image.role))
        if _rejected(findings):
            return findings
    if frames:
        findings.append(_video_face_presence(any_face))
    return findings


# A clip none of whose sampled frames shows an upright face gets the full search (rotated retries,
# the fallback: 0.1-0.6 s a 720p frame) on this many of them, evenly spaced: a face only a rotated
# search finds (a phone clip recorded sideways) is in most of its frames, not one.
FULL_SEARCH_FRAMES = 8


def _a_face_seen(analyser, images: list[_Image], stop: Callable[[], bool]) -> bool | None:
    """Whether a video's sampled frames show a face (None: `stop()` said another check rejected the
    job first): a quick look at each frame in turn (the detector's upright passes) up to the first
    face, then, if none showed one, the full search on up to FULL_SEARCH_FRAMES of them. A faceless
    30 s 720p clip's screening (30 frames, NSFW included): 7.2 -> 2.9 s on the 2-core CI machine."""
    for image in images:
        if stop():
            return None
        if analyser.faces(image.pixels, embed=False, retries=False):
            return True
    count = min(len(images), FULL_SEARCH_FRAMES)
    for index in sorted({int((i + 0.5) * len(images) / count) for i in range(count)}):
        if stop():
            return None
        if analyser.faces(images[index].pixels, embed=False):
            return True
    return False


def _video_face_presence(seen: bool) -> Finding:
    return Finding(
        check="face_presence",
        role="target",
        outcome="pass" if seen else "reject",
        code="" if seen else "no_face_detected",
        message=""
        if seen
        else "We couldn't find any face in the target video to swap. Please choose a "
        "video that shows at least one face.",
    )


def _faces(
    analyser, image: _Image, position: int, faces_for: FacesFor | None, kind: str, *, embed: bool
) -> list[Face]:
    """The image's faces; with `embed`, every one with this analyser's embedding."""
    if faces_for is not None:
        given = faces_for(position, image.pixels, embed)
        if not embed or all(face.embedding is not None and face.embedding_kind == kind for face in given):
            return given
        logger.warning("faces supplied for %s lack %s embeddings; analysing it here", image.role, kind)
    return analyser.faces(image.pixels, embed=embed)


# --- recording -----------------------------------------------------------------------------------


def _decide(stage: str, findings: list[Finding]) -> ScreeningOutcome:
    worst = max((f.severity for f in findings), default=0)
    if worst == 0:
        return ScreeningOutcome("allow")
    if stage == Stage.OUTPUT:  # a result is never rejected outright: a moderator decides
        return ScreeningOutcome("review", "output_review", OUTPUT_REVIEW_MESSAGE)
    if worst == 1:
        return ScreeningOutcome("review", "needs_review", REVIEW_MESSAGE)
    first = next(f for f in findings if f.outcome == "reject")
    return ScreeningOutcome(
        "reject", first.code or "content_rejected", first.message or _reject_message(first.code, first.role)
    )


@transaction.atomic
def _record(
    subject_id: uuid.UUID, stage: str, images: list[_Image], findings: list[Finding], started: float
) -> ScreeningOutcome:
    outcome = _decide(stage, findings)
    disabled = [
        f"{f.check}: {f.detail.get('status', 'disabled')}" for f in findings if f.outcome == "disabled"
    ]
    verdict, _ = Verdict.objects.update_or_create(
        subject_id=subject_id,
        stage=stage,
        defaults=dict(
            decision=outcome.decision,
            code=outcome.code,
            message=outcome.message,
            latency_ms=round((time.perf_counter() - started) * 1000, 2),
            disabled_checks=disabled,
            reviewed_by=None,
            reviewed_at=None,
            review_decision="",
            review_note="",
        ),
    )
    verdict.checks.all().delete()  # a re-screen (sweeper) replaces the check list; records stay as audit
    CheckResult.objects.bulk_create(
        [
            CheckResult(
                verdict=verdict,
                check_name=f.check,
                role=f.role,
                outcome=f.outcome,
                score=f.score,
                threshold=f.threshold,
                code=f.code,
                detail=f.detail,
                elapsed_ms=round(f.elapsed_ms, 2),
            )
            for f in findings
        ]
    )
    for image in images:
        own = [f for f in findings if f.role == image.role]
        worst = max((f.severity for f in own), default=0)
        decision = [Decision.ALLOW, Decision.REVIEW, Decision.REJECT][worst]
        height, width = image.pixels.shape[:2]
        bad_codes = [f.code for f in own if f.outcome == "reject" and f.code in CONTENT_CODES]
        ModerationRecord.objects.create(
            verdict=verdict,
            role=image.role,
            sha256=image.sha256,
            phash=image.phash,
            dhash=image.dhash,
            width=width,
            height=height,
            decision=decision,
            scores={f.check: f.score for f in own if f.score is not None},
            known_bad=bool(bad_codes),
            known_bad_code=bad_codes[0] if bad_codes else "",
            matched_record_id=image.matched_record_id,
        )
    deciding = max(findings, key=lambda f: f.severity, default=None)
    signals.screened.send(
        sender=None,
        stage=stage,
        decision=outcome.decision,
        check=deciding.check if deciding is not None and deciding.severity else "none",
    )
    logger.info(
        "screened %s (%s): %s %s in %.0f ms",
        subject_id,
        stage,
        outcome.decision,
        outcome.code,
        verdict.latency_ms,
    )
    return outcome
