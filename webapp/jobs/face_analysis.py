"""The face-analysis cache: analyse each uploaded image once per job, not once per worker.

Screening (moderation queue) analyses the source photo(s) and a photo target and stores the
analyses; the GPU step loads them instead of detecting, aligning and embedding the same faces
again. A stored analysis is reused only by a pipeline whose analysis signature (backends, model
versions and checksums, detection settings, runtime, mode) is the one it was made with, on an image
of the same pixel size: anything else is a miss and the reader computes (and stores) its own.

One S3 object a job, ``<owner>/<job id>/face-analysis.npz``: an .npz with an entry per analysed
image, named ``<role>-<upload sha256>-<width>x<height>-<mode>-<signature digest>``. One object, not
one per image: screening writes it once and the GPU step reads it once (an object per image cost 8
S3 requests a job, this 4). It lives under the job's prefix whatever the uploads' keys (a direct
upload's lies under ``<owner>/direct/``), so every path that deletes a job's uploads
(services.stored_files.uploads_purge lists that prefix) deletes its face data with them.

The cache never fails a job: an unreadable, missing or unreachable object is a miss, a failed
write is logged and skipped.
"""

from __future__ import annotations

import io
import logging
import zipfile

import numpy as np
from django.conf import settings

from moderation.identities import FaceAnalyser
from swap import face_analysis
from swap.face_analysis import FaceAnalysis
from swap.inference import clock as inference_clock
from swap.pipeline import Pipeline, StageTimer
from swap.types import Face
from webapp.media import storage
from webapp.telemetry import metrics

from .models import Job, Upload

logger = logging.getLogger(__name__)

MEDIA_TYPE = "application/x-npz"


def object_key(job: Job) -> str:
    """Where the job's analyses are stored (under the job's uploads prefix)."""
    return f"{job.owner_id}/{job.id}/face-analysis.npz"


def entry_name(upload: Upload, image: np.ndarray, *, pipeline: Pipeline, mode: str) -> str:
    """The name of the analysis of `image` (the upload's pixels, at the size the job uses)."""
    height, width = image.shape[:2]
    signature = pipeline.analysis_signature(mode)
    digest = face_analysis.signature_digest(signature)
    return f"{upload.role}-{upload.sha256}-{width}x{height}-{signature['mode']}-{digest}"


class JobAnalyses:
    """The stored analyses of one job: read from S3 at the first lookup, written by `save` when
    something was added."""

    def __init__(self, job: Job, *, nothing_stored: bool = False) -> None:
        """`nothing_stored`: the caller knows no analysis of this job was stored yet (its first
        screening): none is read."""
        self.key = object_key(job)
        self._entries: dict[str, bytes] | None = {} if nothing_stored else None
        self._added = False

    def _stored(self) -> dict[str, bytes]:
        if self._entries is None:
            try:
                self._entries = _entries_from_bytes(storage.get_bytes(settings.S3_UPLOADS_BUCKET, self.key))
            except storage.ObjectMissing:
                self._entries = {}
            except (storage.StorageError, face_analysis.AnalysisUnreadable):
                logger.warning("face analyses %s could not be read; analysing again", self.key, exc_info=True)
                self._entries = {}
        return self._entries

    def load(self, upload: Upload, image: np.ndarray, *, pipeline: Pipeline, mode: str) -> FaceAnalysis | None:
        """The stored analysis this pipeline would compute for `image` in `mode`, or None (a miss)."""
        name = entry_name(upload, image, pipeline=pipeline, mode=mode)
        data = self._stored().get(name)
        if data is None:
            return None
        try:
            return face_analysis.analysis_from_bytes(data)
        except face_analysis.AnalysisUnreadable:
            logger.warning("face analysis %s in %s could not be read; analysing again", name, self.key, exc_info=True)
            return None

    def add(self, upload: Upload, image: np.ndarray, analysis: FaceAnalysis, *, pipeline: Pipeline, mode: str) -> None:
        name = entry_name(upload, image, pipeline=pipeline, mode=mode)
        self._stored()[name] = face_analysis.analysis_to_bytes(analysis)
        self._added = True

    def save(self) -> None:
        """Store the analyses (one S3 object) if any was added since the last save."""
        if not self._added:
            return
        try:
            storage.put_bytes(settings.S3_UPLOADS_BUCKET, self.key, _entries_to_bytes(self._stored()), MEDIA_TYPE)
        except storage.StorageError:
            logger.warning("face analyses %s could not be stored", self.key, exc_info=True)
        self._added = False


def _entries_to_bytes(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **{name: np.frombuffer(data, np.uint8) for name, data in entries.items()})
    return buffer.getvalue()


def _entries_from_bytes(data: bytes) -> dict[str, bytes]:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            return {name: stored[name].tobytes() for name in stored.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise face_analysis.AnalysisUnreadable(f"not a job's stored face analyses: {exc}") from exc


def analyse_for_job(
    analyser: FaceAnalyser,
    image: np.ndarray,
    *,
    mode: str,
    role: str,
    target_embeddings: bool,
    every_face: bool,
) -> FaceAnalysis:
    """Every face, with the embeddings the GPU step needs computed in the calls its own analysis
    makes, so a reused embedding is the very one it would compute: a source photo's largest face is
    embedded on its own (Pipeline.prepare_source), a target's faces all in one call (Pipeline._swap).
    `every_face`: the rest are embedded too, for moderation's identity check (when a protected
    identity exists to compare them with).

    `inference_ms` is the model time the GPU step would have spent on this image (the job is
    billed for that when it reuses the analysis): embeddings it would not compute (a source's
    smaller faces; a target's, unless reference mode needs them) are moderation's own cost."""
    pipeline = analyser.pipeline
    # The moderation worker's model runs reach Prometheus as the GPU worker's do (idempotent).
    inference_clock.add_observer(metrics.observe_inference)
    timer = StageTimer()  # detect, landmarks, embed: the engine stages now spent at screening
    with inference_clock.session() as engine_work:
        faces = analyser.faces(image, mode=mode, embed=False, timer=timer)
        with timer.stage("embed"):
            if role == "source":
                pipeline.embed_faces(image, faces[:1])
            elif target_embeddings:
                pipeline.embed_faces(image, faces)
    if every_face:
        with inference_clock.session(), timer.stage("embed"):  # moderation's own embeddings
            pipeline.embed_faces(image, [face for face in faces if face.embedding is None])
    metrics.observe_engine_stages(timer.timings_ms)
    return FaceAnalysis(faces=faces, inference_ms=engine_work.inference_ms)


def fully_embedded(faces: list[Face], kind: str) -> bool:
    return all(face.embedding is not None and face.embedding_kind == kind for face in faces)
