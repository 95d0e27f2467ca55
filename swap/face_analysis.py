"""One image's face analysis as bytes, and the signature of the analyser that produced it.

The platform caches `Pipeline.analyse` results: screening analyses the inputs once and
the GPU step reuses them instead of detecting, aligning and embedding the same faces again. The
stored form is a small compressed .npz (no pickle): float32 arrays round-trip bit for bit, so a
swap on cached faces is pixel-identical to one on freshly analysed faces. Whether an analysis may
be reused at all is decided by `signature_digest`: any difference in the backends, their model
versions, the detection settings, the runtime or the analysis mode gives another digest.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass

import numpy as np

from swap.types import Face

FORMAT_VERSION = 1


class AnalysisUnreadable(ValueError):
    """Stored bytes that are not an analysis of this format (truncated, foreign, older format)."""


@dataclass
class FaceAnalysis:
    faces: list[Face]  # largest first, as Pipeline.analyse returns them
    # Model time the analysis took where it was made: a job that reuses it is billed for it once.
    inference_ms: float = 0.0


def analysis_to_bytes(analysis: FaceAnalysis) -> bytes:
    """An analysis as a small .npz (no pickle)."""
    faces = analysis.faces
    count = len(faces)
    embedded = [face.embedding is not None for face in faces]
    dims = {int(np.asarray(face.embedding).size) for face in faces if face.embedding is not None}
    if len(dims) > 1:
        raise ValueError(f"faces carry embeddings of different sizes: {sorted(dims)}")
    dim = dims.pop() if dims else 0
    embeddings = np.zeros((count, dim), np.float32)
    landmarks_68 = np.zeros((count, 68, 2), np.float32)
    for i, face in enumerate(faces):
        if face.embedding is not None:
            embeddings[i] = np.asarray(face.embedding, np.float32).reshape(-1)
        if face.landmarks_68 is not None:
            landmarks_68[i] = np.asarray(face.landmarks_68, np.float32)
    arrays = {
        "format": np.array([FORMAT_VERSION], np.int32),
        "inference_ms": np.array([analysis.inference_ms], np.float64),
        "boxes": np.array([np.asarray(f.box, np.float32) for f in faces], np.float32).reshape(count, 4),
        "scores": np.array([f.score for f in faces], np.float64),
        "angles": np.array([f.angle for f in faces], np.float64),
        "landmarks_5": np.array([np.asarray(f.landmarks_5, np.float32) for f in faces], np.float32).reshape(
            count, 5, 2
        ),
        "has_landmarks_68": np.array([f.landmarks_68 is not None for f in faces], bool),
        "landmarks_68": landmarks_68,
        "has_embedding": np.array(embedded, bool),
        "embeddings": embeddings,
        "embedding_kinds": np.array([f.embedding_kind or "" for f in faces], dtype="<U16"),
    }
    if any(face.landmarks_468 is not None for face in faces):  # the mesh landmarker's analysis
        arrays["has_mesh"] = np.array([f.landmarks_468 is not None for f in faces], bool)
        arrays["landmarks_468"] = np.array(
            [np.zeros((468, 3), np.float32) if f.landmarks_468 is None else f.landmarks_468 for f in faces],
            np.float32,
        ).reshape(count, 468, 3)
        arrays["mesh_presence"] = np.array([f.mesh_presence or 0.0 for f in faces], np.float64)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def analysis_from_bytes(data: bytes) -> FaceAnalysis:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            if int(stored["format"][0]) != FORMAT_VERSION:
                raise AnalysisUnreadable(f"analysis format {int(stored['format'][0])}, expected {FORMAT_VERSION}")
            arrays = {name: stored[name] for name in stored.files}
    except (OSError, KeyError, ValueError, EOFError) as exc:
        if isinstance(exc, AnalysisUnreadable):
            raise
        raise AnalysisUnreadable(f"not a stored face analysis: {exc}") from exc
    faces = []
    meshed = arrays.get("has_mesh", np.zeros(len(arrays["boxes"]), bool))
    for i in range(len(arrays["boxes"])):
        faces.append(
            Face(
                box=arrays["boxes"][i].copy(),
                score=float(arrays["scores"][i]),
                landmarks_5=arrays["landmarks_5"][i].copy(),
                landmarks_68=arrays["landmarks_68"][i].copy() if arrays["has_landmarks_68"][i] else None,
                embedding=arrays["embeddings"][i].copy() if arrays["has_embedding"][i] else None,
                embedding_kind=str(arrays["embedding_kinds"][i]) or None,
                angle=float(arrays["angles"][i]),
                landmarks_468=arrays["landmarks_468"][i].copy() if meshed[i] else None,
                mesh_presence=float(arrays["mesh_presence"][i]) if meshed[i] else None,
            )
        )
    return FaceAnalysis(faces=faces, inference_ms=float(arrays["inference_ms"][0]))


def signature_digest(signature: dict) -> str:
    """A short, stable digest of `Pipeline.analysis_signature(mode)` (part of a cache key)."""
    canonical = json.dumps({"format": FORMAT_VERSION, **signature}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
