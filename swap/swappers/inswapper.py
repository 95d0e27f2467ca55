"""inswapper_128 (and its fp16 export): identity swap on the arcface_128 crop.

Inputs: `target` [N, 3, 128, 128] RGB / 255 and `source` [N, 512], the latent
(e @ emap) / ‖e‖ where e is the raw ArcFace embedding and `emap` the graph's last initializer.
Output [N, 3, 128, 128] RGB in [0, 1]. All faces of a frame go through one run (up to
`max_batch`), then each is pasted back through the box mask.

Pixel boost (FaceFusion's answer to "higher resolution than 128 px"): the face is aligned at
k·128 px and split into k² interleaved 128-px sub-images (pixel (y, x) goes to sub-image
(y mod k, x mod k)); each runs through the model — all of them in the same batch — and the
outputs are interleaved back into one k·128 crop, which keeps k² times the detail.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from swap.align import box_mask, paste_back_many, warp_faces
from swap.errors import EngineError
from swap.onnx_adapter import OnnxAdapter
from swap.runtime import RuntimeOptions, clock_stage, input_dtype, run_in_batches
from swap.types import EmbeddingKind, Face, SourceIdentity

SIZE = 128
TEMPLATE = "arcface_128"


def read_emap(model_path: Path) -> np.ndarray:
    """The 512×512 embedding map: the LAST initializer of the graph (FaceFusion and insightface
    both rely on that position; there is no name to look it up by)."""
    model = onnx.load(str(model_path))
    return numpy_helper.to_array(model.graph.initializer[-1]).astype(np.float32)


def source_latent(embedding: np.ndarray, emap: np.ndarray) -> np.ndarray:
    """(1, 512) latent = (e @ emap) / ‖e‖, not re-normalised (FaceFusion, unlike insightface)."""
    e = np.asarray(embedding, dtype=np.float32).reshape(1, -1)
    return (e @ emap) / np.linalg.norm(e)


def implode_pixel_boost(crops: np.ndarray, factor: int) -> np.ndarray:
    """(N, k·S, k·S, C) → (N·k², S, S, C): sub-image (i, j) holds pixels [i::k, j::k]."""
    n, size, _, channels = crops.shape
    s = size // factor
    tiles = crops.reshape(n, s, factor, s, factor, channels).transpose(0, 2, 4, 1, 3, 5)
    return tiles.reshape(n * factor * factor, s, s, channels)


def explode_pixel_boost(tiles: np.ndarray, factor: int) -> np.ndarray:
    """Inverse of implode_pixel_boost: (N·k², S, S, C) → (N, k·S, k·S, C)."""
    _, s, _, channels = tiles.shape
    n = len(tiles) // (factor * factor)
    crops = tiles.reshape(n, factor, factor, s, s, channels).transpose(0, 3, 1, 4, 2, 5)
    return crops.reshape(n, s * factor, s * factor, channels)


def preprocess(crops_bgr: np.ndarray) -> np.ndarray:
    """(N, S, S, 3) BGR uint8 → (N, 3, S, S) RGB float32 in [0, 1]."""
    return (crops_bgr[..., ::-1].astype(np.float32) / 255.0).transpose(0, 3, 1, 2).astype(np.float32)


def postprocess(output: np.ndarray) -> np.ndarray:
    """(N, 3, S, S) RGB in [0, 1] → (N, S, S, 3) BGR float32 in [0, 255]."""
    return output.astype(np.float32).transpose(0, 2, 3, 1).clip(0, 1)[..., ::-1] * 255.0


class InswapperSwapper(OnnxAdapter):
    """FaceSwapper for inswapper_128 / inswapper_128_fp16."""

    needs_embedding: EmbeddingKind | None = "arcface512"

    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str = "inswapper_128",
        max_batch: int = 16,
        mask_blur: float = 0.3,
        mask_padding: tuple[float, float, float, float] = (0, 0, 0, 0),
        pixel_boost: int = SIZE,
    ):
        if pixel_boost < SIZE or pixel_boost % SIZE:
            raise ValueError(
                f"pixel_boost must be a multiple of {SIZE} (128, 256, 384, 512…), not {pixel_boost}"
            )
        super().__init__(model_path, runtime, name=name, max_batch=max_batch)
        # A versioned session (Triton, or local while a canary runs) gives the emap of the version
        # each job runs; the plain session: this file's.
        self._served_emap = getattr(self.session, "emap", None)
        self.emap = None if self._served_emap else read_emap(model_path)
        self.crop_size = pixel_boost
        self.boost = pixel_boost // SIZE
        self.mask = box_mask(self.crop_size, mask_blur, mask_padding)
        self.target_dtype = input_dtype(self.session, "target")
        self.source_dtype = input_dtype(self.session, "source")

    def swap_crops(self, latent: np.ndarray, crops_bgr: np.ndarray) -> np.ndarray:
        """Swapped crops (N, B, B, 3) BGR float32 0–255 for aligned crops (N, B, B, 3) BGR, B = pixel boost.

        Every sub-image of every face goes into the same batched run(s)."""
        if self.boost > 1:
            return explode_pixel_boost(
                self._run(latent, implode_pixel_boost(crops_bgr, self.boost)), self.boost
            )
        return self._run(latent, crops_bgr)

    def _run(self, latent: np.ndarray, crops_bgr: np.ndarray) -> np.ndarray:
        target = preprocess(crops_bgr).astype(self.target_dtype)
        source = np.repeat(latent, len(crops_bgr), axis=0).astype(self.source_dtype)
        (output,) = run_in_batches(
            self.session, {"target": target, "source": source}, max_batch=self.max_batch
        )[:1]
        return postprocess(output)

    def swap(self, source: SourceIdentity, frame: np.ndarray, faces: list[Face]) -> np.ndarray:
        if source.embedding_kind != "arcface512":
            raise EngineError(
                f"{self.name} needs an ArcFace 512-d source embedding, got {source.embedding_kind}."
            )
        if not faces:
            return frame.copy()
        crops, matrices = warp_faces(frame, [face.landmarks_5 for face in faces], TEMPLATE, self.crop_size)
        emap = self._served_emap() if self._served_emap else self.emap
        swapped = self.swap_crops(source_latent(source.embedding, emap), crops)
        with clock_stage("paste"):
            return paste_back_many(frame, swapped, [self.mask] * len(faces), matrices)
