"""ArcFace w600k_r50 recogniser: 512-d raw identity embeddings.

Input [N, 3, 112, 112]: arcface_112_v2 crop, RGB, x / 127.5 − 1. Output [N, 512], returned
unnormalised (inswapper's latent divides by the norm itself; selection uses cosine).
"""

from __future__ import annotations

import numpy as np

from swap.align import warp_faces
from swap.inference.runs import run_in_batches
from swap.onnx_adapter import OnnxAdapter
from swap.types import EmbeddingKind, Face

SIZE = 112
TEMPLATE = "arcface_112_v2"


def preprocess(crops_bgr: np.ndarray) -> np.ndarray:
    """(N, S, S, 3) BGR uint8 → (N, 3, S, S) RGB float32 in [−1, 1]."""
    rgb = crops_bgr[..., ::-1].astype(np.float32)
    return (rgb / 127.5 - 1.0).transpose(0, 3, 1, 2).astype(np.float32)


class ArcfaceRecognizer(OnnxAdapter):
    """FaceRecognizer for arcface_w600k_r50."""

    embedding_kind: EmbeddingKind = "arcface512"

    default_name = "arcface_w600k_r50"

    def embed(self, frame: np.ndarray, faces: list[Face]) -> list[np.ndarray]:
        if not faces:
            return []
        crops, _ = warp_faces(frame, [face.landmarks_5 for face in faces], TEMPLATE, SIZE)
        (embeddings,) = run_in_batches(
            self.session, {self.input_name: preprocess(crops)}, max_batch=self.max_batch
        )[:1]
        return [row.astype(np.float32).ravel() for row in embeddings]
