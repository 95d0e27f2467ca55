"""What every ONNX face swapper shares: alignment, pixel boost, masks, paste-back.

A subclass says its crop size (`model_size`), alignment template, how the source identity
becomes the model's `source` input, and how one batch of crops runs. Pixel boost (FaceFusion's
answer to "higher resolution than the model"): the face is aligned at k·S px and split into k²
interleaved S-px sub-images (pixel (y, x) goes to sub-image (y mod k, x mod k)); all of them run
in the same batch and are interleaved back into one k·S crop.

Masks are combined as FaceFusion combines them, by element-wise minimum: the box mask, the
occlusion mask (XSeg, on the target crop before the swap) and the region mask (BiSeNet, on the
swapped crop) — the last two only when those models are installed and the mode is not fast.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from swap.align import box_mask, paste_back_many, warp_faces
from swap.config import RuntimeOptions
from swap.errors import EngineError
from swap.inference.runs import clock_stage
from swap.onnx_adapter import OnnxAdapter
from swap.types import EmbeddingKind, Face, FaceMasker, SourceIdentity


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


class OnnxFaceSwapper(OnnxAdapter):
    needs_embedding: EmbeddingKind | None = "arcface512"
    supports_modes = True  # swap() takes the mode and its pixel boost (swap.modes)
    model_size = 128
    template = "arcface_128"

    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str,
        max_batch: int = 16,
        mask_blur: float = 0.3,
        mask_padding: tuple[float, float, float, float] = (0, 0, 0, 0),
        pixel_boost: int | None = None,
    ):
        if not pixel_boost or (pixel_boost < self.model_size and self.model_size % pixel_boost == 0):
            pixel_boost = self.model_size  # the engine's default 128 means "no boost" for a 256 model
        self._check_size(pixel_boost)
        super().__init__(model_path, runtime, name=name, max_batch=max_batch)
        self.crop_size = pixel_boost
        self.boost = pixel_boost // self.model_size
        self.mask_blur, self.mask_padding = mask_blur, mask_padding
        self.mask = box_mask(self.crop_size, mask_blur, mask_padding)
        self.maskers: list[FaceMasker] = []  # XsegOccluder / BisenetParser, set by the pipeline

    def _check_size(self, size: int) -> None:
        m = self.model_size
        if size < m or size % m:
            raise ValueError(
                f"pixel_boost must be a multiple of {m} ({m}, {2 * m}, {3 * m}, {4 * m}…), not {size}"
            )

    # -- subclasses ---------------------------------------------------------------------------

    def source_input(self, embedding: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _run(self, source: np.ndarray, crops_bgr: np.ndarray) -> np.ndarray:  # pragma: no cover
        """(N, S, S, 3) BGR crops -> (N, S, S, 3) BGR float32 0–255."""
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------------

    def swap_crops(self, source: np.ndarray, crops_bgr: np.ndarray) -> np.ndarray:
        """Swapped crops (N, B, B, 3) BGR float32 0–255 for aligned crops (N, B, B, 3) BGR, B = pixel boost.

        Every sub-image of every face goes into the same batched run(s)."""
        boost = crops_bgr.shape[1] // self.model_size
        if boost > 1:
            return explode_pixel_boost(self._run(source, implode_pixel_boost(crops_bgr, boost)), boost)
        return self._run(source, crops_bgr)

    def crop_masks(self, crops: np.ndarray, swapped: np.ndarray, size: int, mode: str) -> list[np.ndarray]:
        """One combined (box x occlusion x region, by minimum) mask per face."""
        box = self.mask if size == self.crop_size else box_mask(size, self.mask_blur, self.mask_padding)
        layers = [np.broadcast_to(box, (len(crops), size, size))]
        if mode != "fast":
            swapped_u8 = np.clip(np.rint(swapped), 0, 255).astype(np.uint8)
            for masker in self.maskers:
                layers.append(masker.masks(crops if masker.on == "target" else swapped_u8))
        combined = np.minimum.reduce([np.asarray(layer, np.float32) for layer in layers]).clip(0, 1)
        return list(combined)

    def swap(
        self,
        source: SourceIdentity,
        frame: np.ndarray,
        faces: list[Face],
        mode: str = "standard",
        pixel_boost: int | None = None,
    ) -> np.ndarray:
        """`pixel_boost` (a multiple of the model size) overrides the configured crop size for this
        call: mode fast runs at the model size, hq at twice the configured boost (swap.modes)."""
        if source.embedding_kind != "arcface512":
            raise EngineError(
                f"{self.name} needs an ArcFace 512-d source embedding, got {source.embedding_kind}."
            )
        if not faces:
            return frame.copy()
        size = pixel_boost or self.crop_size
        self._check_size(size)
        crops, matrices = warp_faces(frame, [face.landmarks_5 for face in faces], self.template, size)
        swapped = self.swap_crops(self.source_input(source.embedding), crops)
        masks = self.crop_masks(crops, swapped, size, mode)
        with clock_stage("paste"):
            return paste_back_many(frame, swapped, masks, matrices)
