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
        return [f for f in ordered if embedding_distance(f.embedding, reference) < options.reference_distance]
    raise ValueError(f"unknown face selection {options.faces!r} (one, many or reference)")


def _at(ordered: list[Face], index: int, what: str) -> Face:
    if index < 0 or index >= len(ordered):
        raise FaceIndexOutOfRange(index, len(ordered), what=what)
    return ordered[index]
