"""Face presence and protected identities, on the engine's own face analysis (swap.Pipeline).

The moderation worker builds its own pipeline once (CPU, no enhancer, classical swapper so no
swap model is loaded): only detection, landmarks and embeddings are used. Protected identities
are stored as embeddings only; each vector records its kind, and only vectors of the kind this
pipeline produces are compared (dlib128: Euclidean distance; arcface512: cosine distance).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from swap.config import PipelineConfig
from swap.pipeline import Pipeline, StageTimer
from swap.types import Face

from . import conf
from .findings import Finding


class FaceAnalyser:
    def __init__(self) -> None:
        config = PipelineConfig.from_env()
        config.models_dir = settings.VISAGE_MODELS_DIR
        config.swapper = "classical"  # moderation never swaps; don't load a swap model
        config.enhancer = "none"
        self.pipeline = Pipeline(config)
        self.calls = 0

    @property
    def embedding_kind(self) -> str:
        return self.pipeline.recognizer.embedding_kind

    def faces(
        self,
        image_bgr: np.ndarray,
        *,
        mode: str = "standard",
        embed: bool = True,
        timer: StageTimer | None = None,
        retries: bool = True,
    ) -> list[Face]:
        """Every face, largest first, with embeddings (embed=False: the caller embeds them with
        `pipeline.embed_faces`, in the calls it needs). `timer` receives the stage times;
        `retries=False`: a quick look, without the detector's rotated retries and fallback."""
        self.calls += 1
        return self.pipeline.analyse(image_bgr, embed=embed, mode=mode, timer=timer, retries=retries)


_analyser: FaceAnalyser | None = None
_lock = threading.Lock()


def get_analyser() -> FaceAnalyser:
    global _analyser
    with _lock:
        if _analyser is None:
            _analyser = FaceAnalyser()
        return _analyser


def loaded() -> bool:
    return _analyser is not None


@dataclass(frozen=True)
class ProtectedVector:
    identity_id: int
    name: str
    vector: np.ndarray


def distance(a: np.ndarray, b: np.ndarray, kind: str) -> float:
    if kind == "arcface512":
        return float(1.0 - np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12))
    return float(np.linalg.norm(a - b))


def largest_embedding(image_bgr: np.ndarray) -> tuple[np.ndarray, str] | None:
    """The embedding of the largest face (for registering a reference photo), or None."""
    analyser = get_analyser()
    faces = analyser.faces(image_bgr)
    if not faces or faces[0].embedding is None:
        return None
    return faces[0].embedding, analyser.embedding_kind


def presence_check(faces: list[Face], *, role: str) -> Finding:
    """The source needs one usable (large enough) face; a target needs at least one face."""
    if role == "source":
        min_px = conf.min_face_px()
        sides = [min(f.box[2] - f.box[0], f.box[3] - f.box[1]) for f in faces]
        largest = float(max(sides, default=0.0))
        usable = largest >= min_px
        message = (
            ""
            if usable
            else (
                "We couldn't find a clear face in the source image. Please upload a photo where one face is "
                "clearly visible and not too small."
                if faces
                else "We couldn't find a face in the source image. Please upload a photo where one face is clearly visible."
            )
        )
        return Finding(
            check="face_presence",
            role=role,
            outcome="pass" if usable else "reject",
            score=largest,
            threshold=float(min_px),
            code="" if usable else "no_face_detected",
            message=message,
            detail={"faces": len(faces)},
        )
    found = bool(faces)
    return Finding(
        check="face_presence",
        role=role,
        outcome="pass" if found else "reject",
        score=float(len(faces)),
        threshold=1.0,
        code="" if found else "no_face_detected",
        message=""
        if found
        else f"We couldn't find any face in the {role} image to swap. Please choose a {role} "
        "image that shows at least one face.",
        detail={"faces": len(faces)},
    )


def identity_check(faces: list[Face], protected: list[ProtectedVector], *, role: str, kind: str) -> Finding:
    started = time.perf_counter()
    limit = conf.identity_max_distance(kind)
    best: tuple[float, ProtectedVector | None] = (float("inf"), None)
    for face in faces:
        if face.embedding is None:
            continue
        for ref in protected:
            d = distance(face.embedding, ref.vector, kind)
            if d < best[0]:
                best = (d, ref)
    nearest, ref = best
    hit = ref is not None and nearest <= limit
    return Finding(
        check="identity",
        role=role,
        outcome="reject" if hit else "pass",
        score=None if ref is None else round(nearest, 4),
        threshold=limit,
        code="protected_identity" if hit else "",
        detail={
            "identity_id": ref.identity_id if hit else None,
            "identity": ref.name if hit else "",
            "references": len(protected),
            "embedding_kind": kind,
        },
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )
