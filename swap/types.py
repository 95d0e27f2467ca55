"""Plain engine values shared by every stage: numpy arrays in, dataclasses out.

Frames are BGR uint8 arrays of shape (H, W, 3), as OpenCV reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

EmbeddingKind = Literal["dlib128", "arcface512"]
FaceSelection = Literal["one", "many", "reference"]
Mode = Literal["fast", "standard", "hq"]


@dataclass
class Face:
    box: np.ndarray  # (4,) float32: x1, y1, x2, y2 in frame pixels
    score: float
    landmarks_5: np.ndarray  # (5, 2) float32: left eye, right eye, nose tip, mouth left, mouth right
    landmarks_68: np.ndarray | None = None  # (68, 2) float32, iBUG 300-W order
    embedding: np.ndarray | None = None  # raw (not normalised) identity embedding
    embedding_kind: EmbeddingKind | None = None
    angle: float = 0.0  # degrees the frame was rotated for the detector to see this face upright
    # (468, 3) float32: MediaPipe Face Mesh points (x, y in frame pixels, z on x's scale), where the
    # mesh landmarker ran; its face-presence score (0-1).
    landmarks_468: np.ndarray | None = None
    mesh_presence: float | None = None

    @property
    def area(self) -> float:
        x1, y1, x2, y2 = self.box
        return float(max(0.0, x2 - x1) * max(0.0, y2 - y1))


@dataclass
class SwapOptions:
    faces: FaceSelection = "one"
    reference_index: int | None = None  # with faces="reference": which target face is the reference
    face_index: int | None = None  # swap exactly this target face (largest-first order)
    # None: the embedding kind's own line (selection.REFERENCE_THRESHOLDS: dlib128 Euclidean 0.6,
    # arcface512 (1 - cos) / 2 < 0.3); a number overrides it in that kind's metric.
    reference_distance: float | None = None
    # fast | standard | hq: what work is done (swap.modes); the result reports the mode that ran.
    mode: Mode = "standard"
    enhance: bool = False  # legacy spelling of mode="hq" (kept for callers that still set it)
    enhancer_blend: float = 0.8


@dataclass
class SwapResult:
    image: np.ndarray  # BGR uint8, same shape as the target
    faces_used: list[Face]
    timings_ms: dict[str, float] = field(
        default_factory=dict
    )  # per stage: detect, landmarks, embed, swap, enhance, paste, total
    swapper: str = ""
    enhancer: str | None = None
    enhancer_skipped_reason: str | None = None  # e.g. "gfpgan_1.4 is not installed"
    # The billed work of the model calls (dlib, ONNX runs): CPU time on the CPU, wall time on a
    # GPU (swap.inference.clock): billed "GPU seconds".
    inference_ms: float = 0.0
    # The mode asked for, and the mode whose work actually ran (what billing must charge): they
    # differ when this install cannot do more for the asked mode (swap.modes).
    mode_requested: Mode = "standard"
    mode: Mode = "standard"
    mode_steps: tuple[str, ...] = ()
    mode_note: str | None = None  # why `mode` differs from `mode_requested`
    detection: dict[str, object] = field(default_factory=dict)  # how faces were found (retries, fallback)
    # Every face of the target as analysed (or as given), largest first: what a face-analysis
    # cache stores for the target.
    target_faces: list[Face] = field(default_factory=list)
    target_analysis_inference_ms: float = 0.0  # of inference_ms: analysing the target (0 when given)


class FaceDetector(Protocol):
    name: str

    def detect(self, frame: np.ndarray) -> list[Face]: ...


class FaceLandmarker(Protocol):
    name: str

    def refine(self, frame: np.ndarray, faces: list[Face]) -> list[Face]: ...


class FaceRecognizer(Protocol):
    name: str
    embedding_kind: EmbeddingKind

    def embed(self, frame: np.ndarray, faces: list[Face]) -> list[np.ndarray]: ...


@dataclass
class SourceIdentity:
    """Everything a swapper may need from the source photo(s)."""

    image: np.ndarray  # BGR of the (first) source photo
    face: Face  # the chosen face in that photo, with landmarks and embedding
    embedding: np.ndarray  # averaged raw embedding over all source photos
    embedding_kind: EmbeddingKind
    # Every usable photo (image, its largest face): the classical swapper picks or blends them per
    # target face by head pose and expression; ONNX swappers use the averaged embedding.
    photos: list[tuple[np.ndarray, Face]] = field(default_factory=list)
    prepare_ms: float = 0.0  # wall time spent analysing the source photo(s)
    stage_ms: dict[str, float] = field(default_factory=dict)  # of which detect, landmarks, embed
    # Every face of each source photo as analysed (or as given), in photo order, largest first
    # ([] for a photo without a face): what a face-analysis cache stores for the sources.
    analyses: list[list[Face]] = field(default_factory=list)
    analysis_inference_ms: list[float] = field(default_factory=list)  # per photo, of inference_ms
    inference_ms: float = 0.0  # billed work of the model calls (swap.inference.clock), with the first frame


class FaceSwapper(Protocol):
    name: str
    needs_embedding: EmbeddingKind | None  # which recogniser must feed it, or None (classical)

    def swap(self, source: SourceIdentity, frame: np.ndarray, faces: list[Face]) -> np.ndarray:
        """Return a copy of `frame` with every face in `faces` replaced (one batch per call)."""
        ...


class FaceEnhancer(Protocol):
    name: str

    def enhance(self, frame: np.ndarray, faces: list[Face], blend: float) -> np.ndarray: ...


# Which crop a content mask reads: the target's before the swap, or the swapped one.
MaskedCrop = Literal["target", "swapped"]


class FaceMasker(Protocol):
    """A content mask (occlusion, face-parser regions) an ONNX swapper combines with its box mask."""

    name: str
    on: MaskedCrop

    def masks(self, crops_bgr: np.ndarray) -> np.ndarray:
        """(N, S, S) float32 in [0, 1] for aligned crops (N, S, S, 3) BGR uint8."""
        ...
