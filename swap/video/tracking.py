"""Face tracking across frames: full detection on keyframes, landmark refinement in between.

Detection (HOG, a CNN, YOLO) is the expensive stage of a frame; the landmarker only needs a box
near the face. Between keyframes each face is followed from its previous landmarks:
  - with MediaPipe's Face Mesh (a landmarker with `follow`), as MediaPipe's own tracking does: the
    previous frame's mesh gives this frame's crop, and one mesh pass whose face presence is high
    is the face (no patch match, no detector box);
  - otherwise (dlib's 68 points), or when the mesh is unsure, by matching the face's previous
    grey patch in a window around its last box (normalised cross-correlation on a ~48 px
    thumbnail: well under a millisecond); the box is moved by the match and the landmarker re-fits
    the points.
Tracking falls back to full detection when
  - `detect_interval` frames have passed (new faces entering the shot are found within N frames),
  - the picture changed abruptly (scene cut: grey thumbnails differ by more than `scene_cut`),
  - a face's patch no longer matches (correlation below `min_match`) or its refined landmarks
    jumped or changed scale (IoU with the moved box below `min_iou`): the track is lost,
  - nothing is tracked (so a face appearing in an empty shot is swapped from its first frame): a
    quick look (the detector's upright passes, without its rotated retries and fallback: ~20 ms a
    720p frame), the full search only every `detect_interval` frames. A shot with nobody in it
    ran the full search on every frame (each 0.1-0.6 s on the 2-core CI machine).
Only the faces' own regions are turned grey; the scene-cut thumbnail samples every 4th pixel.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from swap import selection
from swap.pipeline import StageTimer
from swap.types import Face


@dataclass
class TrackingConfig:
    enabled: bool = True
    detect_interval: int = 10
    min_iou: float = 0.6
    min_match: float = 0.6  # normalised cross-correlation of the face patch between frames
    scene_cut: float = 25.0  # mean absolute grey difference (0-255) of 32×32 thumbnails


@dataclass
class TrackingStats:
    frames: int = 0
    detections: int = 0
    scene_cuts: int = 0
    lost: int = 0
    mesh_follows: int = 0  # faces followed by the mesh alone (MediaPipe's tracking)
    patch_matches: int = 0  # faces followed by the patch match and a landmark refit
    quick_looks: int = 0  # frames with nothing tracked searched without retries (not in `detections`)


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x2 - x1) * max(0.0, y2 - y1)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else 0.0


def _extent(points: np.ndarray) -> np.ndarray:
    return np.array([*points.min(0), *points.max(0)], np.float32)


@dataclass
class _Track:
    face: Face
    patch: np.ndarray  # the face's grey thumbnail in the frame it was last seen
    # The detector's box relative to the landmarks' extent (offsets in units of extent size), so a
    # box rebuilt from the next frame's landmarks looks like what the landmarker was trained on.
    rel_box: np.ndarray


def _rel_box(face: Face) -> np.ndarray:
    ext = _extent(face.landmarks_68 if face.landmarks_68 is not None else face.landmarks_5)
    size = np.maximum(ext[2:] - ext[:2], 1.0)
    return ((face.box - ext) / np.tile(size, 2)).astype(np.float32)


def _box_from(points: np.ndarray, rel_box: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    ext = _extent(points)
    size = np.maximum(ext[2:] - ext[:2], 1.0)
    box = ext + rel_box * np.tile(size, 2)
    h, w = shape[:2]
    return np.clip(box, 0, [w, h, w, h]).astype(np.float32)


class FaceTracker:
    """Per clip (not thread-safe): `faces(frame)` returns the frame's faces, largest first."""

    def __init__(self, pipeline, config: TrackingConfig | None = None, *, mode: str = "standard") -> None:
        self.pipeline = pipeline
        self.config = config or TrackingConfig()
        self.mode = mode  # the analysis mode of a detection (swap.pipeline.target_analysis_mode)
        self.stats = TrackingStats()
        self.timer = StageTimer()  # detect and landmarks of the frames it detects on
        self._tracks: list[_Track] = []
        self._since_detect = self.config.detect_interval  # the first frame gets the full search
        self._thumb: np.ndarray | None = None

    def faces(self, frame: np.ndarray) -> list[Face]:
        self.stats.frames += 1
        thumb = _thumbnail(frame)
        cut = (
            self._thumb is not None
            and float(np.mean(cv2.absdiff(thumb, self._thumb))) > self.config.scene_cut
        )
        self._thumb = thumb
        self.stats.scene_cuts += int(cut)
        if not self.config.enabled or cut or self._since_detect + 1 >= self.config.detect_interval:
            return self._detect(frame)
        if not self._tracks:
            return self._quick_look(frame)
        tracked = self._follow(frame)
        if tracked is None:
            self.stats.lost += 1
            return self._detect(frame)
        self._since_detect += 1
        return tracked

    def _detect(self, frame: np.ndarray) -> list[Face]:
        self.stats.detections += 1
        self._since_detect = 0
        return self._track(frame, self.pipeline.analyse(frame, embed=False, timer=self.timer, mode=self.mode))

    def _quick_look(self, frame: np.ndarray) -> list[Face]:
        self.stats.quick_looks += 1
        self._since_detect += 1
        faces = self.pipeline.analyse(frame, embed=False, timer=self.timer, mode=self.mode, retries=False)
        return self._track(frame, faces)

    def _track(self, frame: np.ndarray, faces: list[Face]) -> list[Face]:
        self._tracks = [
            _Track(face, _patch(frame, face.box), _rel_box(face))
            for face in faces
            if face.landmarks_68 is not None
        ]
        return faces

    def _follow(self, frame: np.ndarray) -> list[Face] | None:
        follow = getattr(self.pipeline.landmarker, "follow", None)
        faces: list[Face] = []
        for track in self._tracks:
            face = follow(frame, track.face) if follow is not None else None
            if face is not None:
                self.stats.mesh_follows += 1
                face.box = _box_from(face.landmarks_68, track.rel_box, frame.shape)
            else:
                face = self._match_and_refit(frame, track)
                if face is None:
                    return None
                self.stats.patch_matches += 1
            track.face = face
            track.patch = _patch(frame, face.box)
            faces.append(face)
        return selection.by_size(faces)

    def _match_and_refit(self, frame: np.ndarray, track: _Track) -> Face | None:
        """The face moved to where its patch matches, its landmarks re-fitted there; None: lost."""
        moved = _match(frame, track.face.box, track.patch, self.config.min_match)
        if moved is None:
            return None
        guess = Face(box=moved, score=track.face.score, landmarks_5=track.face.landmarks_5.copy())
        refined = self.pipeline.landmarker.refine(frame, [guess])
        if not refined or refined[0].landmarks_68 is None:
            return None
        face = refined[0]
        face.box = _box_from(face.landmarks_68, track.rel_box, frame.shape)
        if _iou(moved, face.box) < self.config.min_iou:
            return None
        return face


PATCH_SIDE = 48


def _thumbnail(frame: np.ndarray) -> np.ndarray:
    """32x32 grey thumbnail for the scene-cut test: every 4th pixel, area-averaged (averaging the
    whole 720p frame down costs ~2.5 ms, ten times more, for a test this coarse). The 4th pixels are
    taken by a nearest-neighbour resize at exactly 1/4 (the pixels of frame[::4, ::4]): 0.26 ms a 720p frame,
    where area-averaging the strided view costs 0.58."""
    h, w = (max(4, side - side % 4) for side in frame.shape[:2])
    every_4th = cv2.resize(frame[:h, :w], (w // 4, h // 4), interpolation=cv2.INTER_NEAREST)
    small = cv2.resize(every_4th, (32, 32), interpolation=cv2.INTER_AREA)
    return cv2.cvtColor(small, cv2.COLOR_BGR2GRAY) if small.ndim == 3 else small


def _grey(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image


def _scale_for(box: np.ndarray) -> float:
    return PATCH_SIDE / max(1.0, float(box[2] - box[0]))


def _patch(frame: np.ndarray, box: np.ndarray) -> np.ndarray:
    x1, y1, x2, y2 = (int(round(v)) for v in box)
    crop = _grey(frame[max(0, y1) : max(y1 + 1, y2), max(0, x1) : max(x1 + 1, x2)])
    scale = _scale_for(box)
    size = (max(8, round(crop.shape[1] * scale)), max(8, round(crop.shape[0] * scale)))
    return cv2.resize(crop, size, interpolation=cv2.INTER_AREA)


def _match(frame: np.ndarray, box: np.ndarray, patch: np.ndarray, min_match: float) -> np.ndarray | None:
    """The box moved to where `patch` matches best within one face size around it, or None."""
    h, w = frame.shape[:2]
    bw, bh = box[2] - box[0], box[3] - box[1]
    wx1, wy1 = int(max(0, box[0] - bw)), int(max(0, box[1] - bh))
    wx2, wy2 = int(min(w, box[2] + bw)), int(min(h, box[3] + bh))
    scale = _scale_for(box)
    window = cv2.resize(
        _grey(frame[wy1:wy2, wx1:wx2]),
        (max(1, round((wx2 - wx1) * scale)), max(1, round((wy2 - wy1) * scale))),
        interpolation=cv2.INTER_AREA,
    )
    if window.shape[0] < patch.shape[0] or window.shape[1] < patch.shape[1]:
        return None  # the face reached the frame's edge: let detection decide
    scores = cv2.matchTemplate(window, patch, cv2.TM_CCOEFF_NORMED)
    _, best, _, (mx, my) = cv2.minMaxLoc(scores)
    if best < min_match:
        return None
    x1, y1 = wx1 + mx / scale, wy1 + my / scale
    return np.clip(np.array([x1, y1, x1 + bw, y1 + bh], np.float32), 0, [w, h, w, h]).astype(np.float32)
