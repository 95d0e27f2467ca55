"""Which target faces get swapped. Pure functions over detected faces."""

from __future__ import annotations

import numpy as np

from swap.errors import FaceIndexOutOfRange
from swap.types import Face, SwapOptions


def by_size(faces: list[Face]) -> list[Face]:
    """Largest first: the order `face_index` and `reference_index` refer to."""
    return sorted(faces, key=lambda f: f.area, reverse=True)


def embedding_distance(a: np.ndarray, b: np.ndarray) -> float:
    """(1 - cos) / 2: 0 for the same direction, 1 for opposite (FaceFusion's face distance)."""
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    denom = float(np.linalg.norm(a) * np.linalg.norm(b)) or 1e-12
    return (1.0 - float(a @ b) / denom) / 2.0


# The "same person" line differs by embedding: dlib's ResNet descriptor is trained for Euclidean
# distance with 0.6 as its documented line (same person 0.34-0.50, different 0.67-1.0 on our
# photos), while its cosine distance puts different people at 0.07-0.10, under ArcFace's 0.3.
REFERENCE_THRESHOLDS: dict[str, tuple[str, float]] = {
    "dlib128": ("euclidean", 0.6),
    "arcface512": ("cosine", 0.3),  # (1 - cos) / 2, FaceFusion's reference_face_distance
}


def face_distance(a: np.ndarray, b: np.ndarray, kind: str | None) -> float:
    """The distance reference matching uses for embeddings of `kind` (see REFERENCE_THRESHOLDS)."""
    metric = REFERENCE_THRESHOLDS.get(kind or "arcface512", ("cosine", 0.3))[0]
    if metric == "euclidean":
        return float(np.linalg.norm(np.asarray(a, np.float64).ravel() - np.asarray(b, np.float64).ravel()))
    return embedding_distance(a, b)


def reference_threshold(kind: str | None, override: float | None = None) -> float:
    """Below this `face_distance` two faces are the same person (an explicit override wins)."""
    if override is not None:
        return float(override)
    kind = kind or "arcface512"  # unlabelled embeddings: FaceFusion's cosine line
    if kind not in REFERENCE_THRESHOLDS:
        raise ValueError(f"no reference threshold for embeddings of kind {kind!r}")
    return REFERENCE_THRESHOLDS[kind][1]


def needs_embeddings(options: SwapOptions) -> bool:
    return options.face_index is None and options.faces == "reference"


def select_faces(faces: list[Face], options: SwapOptions, reference: np.ndarray | None = None) -> list[Face]:
    """Pick the faces to swap, largest first.

    `face_index` wins over `faces`. In "reference" mode the reference embedding is `reference`
    if given, else the embedding of target face `options.reference_index` (default 0).
    """
    ordered = by_size(faces)
    if options.face_index is not None:
        return [_at(ordered, options.face_index, "face_index")]
    if not ordered:
        return []
    if options.faces == "one":
        return ordered[:1]
    if options.faces == "many":
        return ordered
    if options.faces == "reference":
        if reference is None:
            ref_face = _at(ordered, options.reference_index or 0, "reference_index")
            reference = ref_face.embedding
        if reference is None or any(f.embedding is None for f in ordered):
            raise ValueError("reference selection needs embeddings for the faces")
        kind = ordered[0].embedding_kind
        limit = reference_threshold(kind, options.reference_distance)
        return [f for f in ordered if face_distance(f.embedding, reference, kind) < limit]
    raise ValueError(f"unknown face selection {options.faces!r} (one, many or reference)")


def _at(ordered: list[Face], index: int, what: str) -> Face:
    if index < 0 or index >= len(ordered):
        raise FaceIndexOutOfRange(index, len(ordered), what=what)
    return ordered[index]
