"""ArcFace w600k_r50 recogniser: 512-d raw identity embeddings.

Input [N, 3, 112, 112]: arcface_112_v2 crop, RGB, x / 127.5 − 1. Output [N, 512], returned
unnormalised (inswapper's latent divides by the norm itself; selection uses cosine).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from swap.align import warp_faces
from swap.runtime import RuntimeOptions, get_session, run_in_batches, warm_up
from swap.types import EmbeddingKind, Face

SIZE = 112
TEMPLATE = "arcface_112_v2"


def preprocess(crops_bgr: np.ndarray) -> np.ndarray:
    """(N, S, S, 3) BGR uint8 → (N, 3, S, S) RGB float32 in [−1, 1]."""
    rgb = crops_bgr[..., ::-1].astype(np.float32)
    return (rgb / 127.5 - 1.0).transpose(0, 3, 1, 2).astype(np.float32)


class ArcfaceRecognizer:
    """FaceRecognizer for arcface_w600k_r50."""

    # Only the model runs count as inference (swap.runtime.run_in_batches measures them), not
    # the warping and pasting around them.
    reports_inference_time = True

    embedding_kind: EmbeddingKind = "arcface512"

    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str = "arcface_w600k_r50",
        max_batch: int = 16,
    ):
        self.name = name
        self.max_batch = max_batch
        self.session = get_session(model_path, runtime or RuntimeOptions())
        self.input_name = self.session.get_inputs()[0].name

    def warm_up(self) -> None:
        warm_up(self.session)

    def embed(self, frame: np.ndarray, faces: list[Face]) -> list[np.ndarray]:
        if not faces:
            return []
        crops, _ = warp_faces(frame, [face.landmarks_5 for face in faces], TEMPLATE, SIZE)
        (embeddings,) = run_in_batches(
            self.session, {self.input_name: preprocess(crops)}, max_batch=self.max_batch
        )[:1]
        return [row.astype(np.float32).ravel() for row in embeddings]
