"""The face-analysis cache: analyse each uploaded image once per job, not once per worker.

Screening (moderation queue) analyses the source photo(s) and a photo target and stores each
analysis as a small object in the uploads bucket; the GPU step loads them instead of detecting,
aligning and embedding the same faces again. A stored analysis is reused only by a pipeline whose
analysis signature (backends, model versions and checksums, detection settings, runtime, mode)
is the one it was made with, on an image of the same pixel size: anything else is a miss and the
reader computes (and stores) its own.

Key: ``<upload s3_key>.face-analysis/<upload sha256>-<width>x<height>-<mode>-<signature digest>.npz``.
It lives under the job's upload prefix (``<owner>/<job>/``), so every path that deletes a job's
uploads (services.stored_files.uploads_purge lists that prefix) deletes its face data with them.

The cache never fails a job: an unreadable, missing or unreachable object is a miss, a failed
write is logged and skipped.
"""

from __future__ import annotations

import logging

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

from .models import Upload

logger = logging.getLogger(__name__)

MEDIA_TYPE = "application/x-npz"


def cache_key(upload: Upload, image: np.ndarray, *, pipeline: Pipeline, mode: str) -> str:
    """Where the analysis of `image` (the upload's pixels, at the size the job uses) is stored."""
    height, width = image.shape[:2]
    signature = pipeline.analysis_signature(mode)
    digest = face_analysis.signature_digest(signature)
    return f"{upload.s3_key}.face-analysis/{upload.sha256}-{width}x{height}-{signature['mode']}-{digest}.npz"


def load(upload: Upload, image: np.ndarray, *, pipeline: Pipeline, mode: str) -> FaceAnalysis | None:
    """The stored analysis this pipeline would compute for `image` in `mode`, or None (a miss)."""
    key = cache_key(upload, image, pipeline=pipeline, mode=mode)
    try:
        return face_analysis.analysis_from_bytes(storage.get_bytes(settings.S3_UPLOADS_BUCKET, key))
    except storage.ObjectMissing:
        return None
    except (storage.StorageError, face_analysis.AnalysisUnreadable):
        logger.warning("face analysis %s could not be read; analysing again", key, exc_info=True)
        return None


def store(upload: Upload, image: np.ndarray, analysis: FaceAnalysis, *, pipeline: Pipeline, mode: str) -> None:
    key = cache_key(upload, image, pipeline=pipeline, mode=mode)
    try:
        storage.put_bytes(settings.S3_UPLOADS_BUCKET, key, face_analysis.analysis_to_bytes(analysis), MEDIA_TYPE)
    except storage.StorageError:
        logger.warning("face analysis %s could not be stored", key, exc_info=True)


def analyse_for_job(
    analyser: FaceAnalyser, image: np.ndarray, *, mode: str, role: str, target_embeddings: bool
) -> FaceAnalysis:
    """Every face with moderation's embeddings, computed in the calls the GPU step's own analysis
    makes, so a reused embedding is the very one it would compute: a source photo's largest face is
    embedded on its own (Pipeline.prepare_source), a target's faces all in one call (Pipeline._swap).

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
    with inference_clock.session(), timer.stage("embed"):  # moderation's own embeddings
        pipeline.embed_faces(image, [face for face in faces if face.embedding is None])
    metrics.observe_engine_stages(timer.timings_ms)
    return FaceAnalysis(faces=faces, inference_ms=engine_work.inference_ms)


def fully_embedded(faces: list[Face], kind: str) -> bool:
    return all(face.embedding is not None and face.embedding_kind == kind for face in faces)
