"""MediaPipe's Face Mesh: 468 3-D points per face, and the 68- and 5-point sets derived from them.

The crop follows MediaPipe's face_landmark_front graph: a square around the detector's box, 1.5x
its longer side, rotated so the eye line is level (from the detection's eye keypoints, here
`Face.landmarks_5`'s eyes), resized to 192 px, RGB in [0, 1]. The model returns the 468 points in
crop pixels (x, y, and z on x's scale) and a face-presence logit. Like MediaPipe's tracking,
which crops each next frame from the previous mesh, a pass whose presence is poor or whose eye line
is far from level (a loose box from a fallback detector, BlazeFace's keypoints on a turned head)
is run again on the crop the mesh itself gives: the points' bounding box, rotated by the outer
eye corners 33 -> 263, 1.5x. `follow` is that crop from the previous video frame's mesh, alone.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import cv2
import numpy as np

from swap.face_landmarks.dlib_shape import five_from_68
from swap.face_mesh_points import MESH_TO_68
from swap.inference.litert import load_tflite
from swap.types import Face

SIZE = 192
ROI_SCALE = 1.5
# Below this face presence (sigmoid of the model's flag), the crop is redone from the mesh.
GOOD_PRESENCE = 0.9
# A detection the mesh finds no face in (below this presence) is dropped, as MediaPipe's graph
# drops it (there at 0.5; lower here, so a face half behind a hand or a mask is kept).
MIN_PRESENCE = 0.2
# ... and when the mesh's own eye line is more than this off the crop's (the detector's eye
# keypoints are guesses on a sideways or upside-down head): the crop was not level.
MAX_TILT_DEG = 6.0
MAX_RERUNS = 3
RIGHT_EYE_OUTER, LEFT_EYE_OUTER = 33, 263


def roi_matrix(centre: np.ndarray, side: float, angle_rad: float) -> np.ndarray:
    """2x3 matrix frame -> crop: a `side`-px square around `centre`, turned by `angle_rad` (the
    eye line's angle in the frame) so that it is level in the SIZE-px crop."""
    scale = SIZE / max(side, 1.0)
    cos, sin = np.cos(-angle_rad) * scale, np.sin(-angle_rad) * scale
    rotation = np.array([[cos, -sin], [sin, cos]])
    offset = np.array([SIZE / 2.0, SIZE / 2.0]) - rotation @ np.asarray(centre, np.float64)
    return np.hstack([rotation, offset[:, None]])


def eye_angle(right_eye: np.ndarray, left_eye: np.ndarray) -> float:
    d = np.asarray(left_eye, np.float64) - np.asarray(right_eye, np.float64)
    return float(np.arctan2(d[1], d[0]))


def roi_from_box(box: np.ndarray, angle_rad: float) -> np.ndarray:
    x1, y1, x2, y2 = (float(v) for v in box)
    centre = np.array([(x1 + x2) / 2.0, (y1 + y2) / 2.0])
    return roi_matrix(centre, ROI_SCALE * max(x2 - x1, y2 - y1), angle_rad)


def mesh_angle(points: np.ndarray) -> float:
    return eye_angle(points[RIGHT_EYE_OUTER, :2], points[LEFT_EYE_OUTER, :2])


def roi_from_mesh(points: np.ndarray) -> np.ndarray:
    lo, hi = points[:, :2].min(0), points[:, :2].max(0)
    return roi_matrix((lo + hi) / 2.0, ROI_SCALE * float(max(hi - lo)), mesh_angle(points))


class FaceMeshLandmarker:
    """FaceLandmarker for MediaPipe's face_landmark.tflite: sets landmarks_468 (x, y, z in frame
    pixels), landmarks_68 and landmarks_5 on each face, and leaves out detections that are no face
    (a detector's false positive: a cup, a pattern)."""

    reports_inference_time = True

    def __init__(self, model_path: Path, runtime: object | None = None, *, name: str, max_batch: int = 1):
        self.name = name
        self.model = load_tflite(Path(model_path), name)

    def mesh(self, frame: np.ndarray, matrix: np.ndarray) -> tuple[np.ndarray, float]:
        """The 468 points (frame pixels) and the face presence for the crop `matrix` makes."""
        crop = cv2.warpAffine(
            frame, matrix, (SIZE, SIZE), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT
        )
        tensor = cv2.cvtColor(crop, cv2.COLOR_BGR2RGB).astype(np.float32)[None] / 255.0
        raw, flag = self.model.run(tensor)
        points = raw.reshape(468, 3).astype(np.float64)
        inverse = cv2.invertAffineTransform(matrix)
        xy = points[:, :2] @ inverse[:, :2].T + inverse[:, 2]
        z = points[:, 2:] * np.hypot(inverse[0, 0], inverse[0, 1])
        presence = float(1.0 / (1.0 + np.exp(-float(np.ravel(flag)[0]))))
        return np.hstack([xy, z]).astype(np.float32), presence

    def refine(self, frame: np.ndarray, faces: list[Face]) -> list[Face]:
        refined = []
        for face in faces:
            angle = eye_angle(face.landmarks_5[0], face.landmarks_5[1])
            points, presence = self.mesh(frame, roi_from_box(face.box, angle))
            for _ in range(MAX_RERUNS):
                tilt = np.degrees(abs(np.angle(np.exp(1j * (mesh_angle(points) - angle)))))
                if presence >= GOOD_PRESENCE and tilt <= MAX_TILT_DEG:
                    break
                angle = mesh_angle(points)
                again, again_presence = self.mesh(frame, roi_from_mesh(points))
                if again_presence < presence - 0.05:
                    break
                points, presence = again, again_presence
            if presence >= MIN_PRESENCE:
                refined.append(with_mesh(face, points, presence))
        return refined

    def follow(self, frame: np.ndarray, face: Face) -> Face | None:
        """MediaPipe's tracking: the mesh of the previous frame's `face` gives this frame's crop
        (roi_from_mesh); one pass, kept when the model is sure a face fills it (presence at least
        GOOD_PRESENCE), else None (the caller searches again). No detector box, no eye angle guess."""
        if face.landmarks_468 is None:
            return None
        points, presence = self.mesh(frame, roi_from_mesh(face.landmarks_468))
        if presence < GOOD_PRESENCE:
            return None
        return with_mesh(face, points, presence)


def with_mesh(face: Face, points: np.ndarray, presence: float) -> Face:
    points_68 = points[MESH_TO_68, :2].astype(np.float32)
    return dataclasses.replace(
        face,
        landmarks_468=points,
        landmarks_68=points_68,
        landmarks_5=five_from_68(points_68),
        mesh_presence=presence,
    )
