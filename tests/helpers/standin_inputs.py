"""Inputs for the generated stand-in models (swap.models.standins): faces placed on a template,
emaps with a known latent, textured frames, detector rows, and a session that counts its batches.
Shared by the adapter, Triton, canary, mask and GHOST tests."""

from __future__ import annotations

import numpy as np

from swap import align
from swap.config import RuntimeOptions
from swap.types import Face, SourceIdentity

CPU = RuntimeOptions(providers=["CPUExecutionProvider"], intra_op_threads=1)
LATENT_0 = 0.4  # the stand-in inswapper writes latent[0] into the B channel


def emap_for(embedding: np.ndarray) -> np.ndarray:
    """A random emap whose column 0 makes (e @ emap)[0] / ‖e‖ == LATENT_0."""
    emap = np.random.default_rng(3).standard_normal((512, 512)).astype(np.float32) * 0.05
    emap[:, 0] = LATENT_0 * embedding / np.linalg.norm(embedding)
    return emap


def face_at(template: str, size: int, x: float, y: float, scale: float = 1.0) -> Face:
    points = align.template_points(template, size) * scale + np.float32([x, y])
    box = np.float32([x, y, x + size * scale, y + size * scale])
    return Face(box=box, score=0.9, landmarks_5=points.astype(np.float32))


def identity(embedding: np.ndarray, kind: str = "arcface512") -> SourceIdentity:
    face = face_at("arcface_128", 128, 0, 0)
    return SourceIdentity(
        image=np.zeros((8, 8, 3), np.uint8), face=face, embedding=embedding, embedding_kind=kind
    )


class CountingSession:
    """Wraps an InferenceSession and counts runs (and the batch size of each)."""

    def __init__(self, session):
        self._session = session
        self.batches: list[int] = []

    def run(self, outputs, feeds):
        self.batches.append(len(next(iter(feeds.values()))))
        return self._session.run(outputs, feeds)

    def __getattr__(self, name):
        return getattr(self._session, name)


def textured_frame(height: int = 320, width: int = 320) -> np.ndarray:
    return np.random.default_rng(11).integers(0, 256, (height, width, 3), dtype=np.uint8)


def enhancer_frame() -> np.ndarray:
    yy, xx = np.mgrid[:560, :560]
    return np.dstack([(xx // 3) % 256, (yy // 3) % 256, np.full_like(xx, 200)]).astype(np.uint8)


def yolo_rows() -> list[dict]:
    kps = [(300, 180), (340, 180), (320, 200), (305, 225), (335, 225)]
    return [
        dict(anchor=0, cx=320, cy=200, w=100, h=120, score=0.0, kps=kps),  # score ← top-left B / 255
        dict(anchor=1, cx=325, cy=205, w=100, h=120, score=0.8, kps=kps),  # overlaps anchor 0: NMS
        dict(anchor=2, cx=500, cy=300, w=50, h=50, score=0.7, kps=[(500, 300)] * 5),
        dict(anchor=3, cx=100, cy=100, w=40, h=40, score=0.3, kps=[(100, 100)] * 5),  # below 0.5
    ]


def points_64() -> np.ndarray:
    return np.random.default_rng(5).uniform(10, 54, (68, 2)).astype(np.float32)
