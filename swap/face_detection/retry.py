"""Finding faces the first detector misses: angle retries, then a fallback detector.

FaceFusion retries detection on rotated copies of the frame and maps the boxes back; dlib's
HOG detector also misses tilted (rolled) heads, so when it finds nothing we try the frame
rotated by each of `angles` (stopping at the first whose faces the caller's `verify` keeps), and
then a fallback detector (behind HOG, dlib's CNN face detector on a downscaled copy, which finds
profile-ish and cut-off faces HOG cannot; behind BlazeFace, dlib's HOG). Each found face
remembers the angle it was upright at (`Face.angle`) so the landmarker can look at it upright too.
What was tried and how long it took is reported.

A caller that only uses the largest face (a source photo) asks for `largest_only`: HOG first
searches without upsampling (faces from ~80 px on the searched copy, a quarter of the cost), and
the full search runs only when that finds nothing. Smaller faces beside a larger one may then be
missing from the result; the largest is the same face.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import cv2
import numpy as np

from swap.image_io import reduced
from swap.types import Face, FaceDetector

DEFAULT_ANGLES = (-30.0, 30.0, 90.0, -90.0, 180.0, -60.0, 60.0)  # as PipelineConfig.detect_angles


@dataclass
class DetectionReport:
    detector: str
    found_by: str | None = None  # detector name (with "@angle" for a retry), None if nothing found
    tries: list[str] = field(default_factory=list)
    retry_ms: float = 0.0  # time spent on angle retries and the fallback (0 if the first pass found faces)

    def as_dict(self) -> dict[str, object]:
        return {
            "detector": self.detector,
            "found_by": self.found_by,
            "tries": list(self.tries),
            "retry_ms": round(self.retry_ms, 1),
        }


def rotate_frame(frame: np.ndarray, angle: float) -> tuple[np.ndarray, np.ndarray]:
    """The frame rotated by `angle` degrees (counter-clockwise, as OpenCV) on a canvas large enough
    to hold all of it, and the 2x3 matrix frame -> rotated."""
    h, w = frame.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle, 1.0)
    cos, sin = abs(m[0, 0]), abs(m[0, 1])
    nw, nh = int(round(h * sin + w * cos)), int(round(h * cos + w * sin))
    m[0, 2] += nw / 2.0 - w / 2.0
    m[1, 2] += nh / 2.0 - h / 2.0
    rotated = cv2.warpAffine(frame, m, (nw, nh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    return rotated, m


def map_face_back(
    face: Face, matrix: np.ndarray, angle: float, frame_shape: tuple[int, ...], scale: float = 1.0
) -> Face:
    """A face found in a rotated frame (`matrix`: frame -> rotated, `scale` the rotated copy's size
    over the frame's), in the original frame: same box size around the mapped centre (the face's own
    frame is rotated, not bigger), upright angle recorded."""
    inverse = cv2.invertAffineTransform(matrix)
    x1, y1, x2, y2 = face.box
    centre = np.array([(x1 + x2) / 2.0, (y1 + y2) / 2.0, 1.0])
    cx, cy = inverse @ centre
    half_w, half_h = (x2 - x1) / 2.0 / scale, (y2 - y1) / 2.0 / scale
    h, w = frame_shape[:2]
    box = np.array([cx - half_w, cy - half_h, cx + half_w, cy + half_h], np.float32)
    points = cv2.transform(face.landmarks_5.reshape(-1, 1, 2).astype(np.float32), inverse).reshape(-1, 2)
    mapped = Face(box=np.clip(box, 0, [w, h, w, h]).astype(np.float32), score=face.score, landmarks_5=points)
    mapped.angle = float(angle)
    return mapped


class RetryingDetector:
    """A FaceDetector that retries on rotated copies and then a fallback detector."""

    reports_inference_time = True

    def __init__(
        self,
        primary: FaceDetector,
        *,
        angles: tuple[float, ...] = DEFAULT_ANGLES,
        fallback: Callable[[], FaceDetector] | None = None,
    ) -> None:
        self.primary = primary
        self.angles = tuple(angles)
        self._fallback_factory = fallback  # built on first use: most jobs never need it
        self._fallback: FaceDetector | None = None
        self.name = primary.name
        self.last_report = DetectionReport(detector=primary.name)

    def detect(
        self,
        frame: np.ndarray,
        *,
        retries: bool = True,
        max_side: int | None = None,
        largest_only: bool = False,
        verify: Callable[..., list[Face]] | None = None,
    ) -> list[Face]:
        """`verify(faces, retried=...)` (the landmarker's check: Face Mesh drops a candidate it finds
        no face in) is run on each try's faces; a try none of whose faces it keeps counts as finding
        nothing, so the next try runs. Without it, a false candidate on the upright frame (a rocket's
        nose, a sleeve) stopped the search before the rotation that finds a photo's sideways face.
        `retried` is true for the rotated copies and the fallback: every further try is another
        chance at a false face, so the check may ask more of them."""

        def kept(faces: list[Face], retried: bool = False) -> list[Face]:
            return verify(faces, retried=retried) if faces and verify is not None else faces

        def kept_retried(faces: list[Face]) -> list[Face]:
            return kept(faces, retried=True)

        name = self.primary.name
        report = DetectionReport(detector=name)
        faces: list[Face] = []
        searched_large = False  # the search without upsampling ran and found nothing
        if largest_only and getattr(self.primary, "upsample", 0) > 0:
            report.tries.append(f"{name}@upsample0")
            faces = kept(self.primary.detect(frame, max_side=max_side, upsample=0))
            report.found_by = f"{name}@upsample0" if faces else None
            searched_large = not faces
        if not faces:
            # A detector whose search for small faces is a pass of its own (BlazeFace's wide pass)
            # runs that alone after the search without upsampling found nothing; dlib's HOG
            # searches its whole pyramid again.
            detect_small = getattr(self.primary, "detect_small", None) if searched_large else None
            report.tries.append(f"{name}@small" if detect_small else name)
            faces = kept(detect_small(frame, max_side=max_side) if detect_small else self._primary(frame, max_side))
            report.found_by = report.tries[-1] if faces else None
        if not faces and retries:
            start = time.perf_counter()
            # The copies are rotated from the detector's reduced copy, not the whole frame (a 12 MP
            # photo's rotation cost ~60-100 ms a retry); the detector sees them at the same scale.
            copy = self._searched_copy(frame, max_side)
            sx, sy = copy.shape[1] / frame.shape[1], copy.shape[0] / frame.shape[0]
            scale = (sx + sy) / 2.0
            for angle in self.angles:
                report.tries.append(f"{name}@{angle:g}")
                rotated, matrix = rotate_frame(copy, angle)
                matrix = matrix @ np.array([[sx, 0, 0], [0, sy, 0], [0, 0, 1]])  # frame -> rotated
                faces = kept_retried([map_face_back(face, matrix, angle, frame.shape, scale)
                                      for face in self._primary(rotated, max_side)])
                if faces:
                    report.found_by = f"{name}@{angle:g}"
                    break
            fallback = self.fallback
            if not faces and fallback is not None:
                report.tries.append(fallback.name)
                if isinstance(fallback, RetryingDetector):  # dlib's HOG, then its CNN: all of it a retry
                    faces = fallback.detect(frame, verify=kept_retried if verify is not None else None)
                else:
                    faces = kept_retried(fallback.detect(frame))
                if faces:
                    report.found_by = fallback.name
            report.retry_ms = (time.perf_counter() - start) * 1000.0
        self.last_report = report
        return faces

    @property
    def fallback(self) -> FaceDetector | None:
        if self._fallback is None and self._fallback_factory is not None:
            self._fallback = self._fallback_factory()
        return self._fallback

    def _searched_copy(self, frame: np.ndarray, max_side: int | None) -> np.ndarray:
        """The frame reduced to the primary detector's `max_side`, as it reduces what it searches
        (the frame itself when it is not larger)."""
        side = max_side or getattr(self.primary, "max_side", None)
        h, w = frame.shape[:2]
        if not side or max(h, w) <= side:
            return frame
        scale = side / max(h, w)
        return reduced(frame, (max(1, round(w * scale)), max(1, round(h * scale))))

    def _primary(self, frame: np.ndarray, max_side: int | None) -> list[Face]:
        if max_side is not None and hasattr(self.primary, "max_side"):
            return self.primary.detect(frame, max_side=max_side)
        return self.primary.detect(frame)
