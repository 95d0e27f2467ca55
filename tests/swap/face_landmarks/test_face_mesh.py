"""MediaPipe's Face Mesh on a crop turned by the eye line, and the 68 and 5 points made from it."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from swap.face_detection.retry import rotate_frame
from swap.face_landmarks.face_mesh import MIN_PRESENCE, roi_from_box
from swap.face_mesh_points import MESH_TO_68
from swap.models import registry
from swap.types import Face


@pytest.fixture(scope="module")
def mesh(mesh_models_dir):
    return registry.load_adapter("face_mesh_468", mesh_models_dir)


@pytest.fixture(scope="module")
def dlib_face(pipeline, astronaut) -> Face:
    (face,) = pipeline.analyse(astronaut, embed=False)  # dlib: an independent 68-point reference
    return face


def eye_distance(points_68: np.ndarray) -> float:
    return float(np.linalg.norm(points_68[36:42].mean(0) - points_68[42:48].mean(0)))


def test_the_68_points_from_the_mesh_agree_with_dlibs(mesh, dlib_face, astronaut):
    (face,) = mesh.refine(astronaut, [Face(box=dlib_face.box, score=1.0, landmarks_5=dlib_face.landmarks_5)])
    assert face.landmarks_468.shape == (468, 3) and face.mesh_presence > 0.9
    assert len(set(MESH_TO_68.tolist())) == 68
    error = np.linalg.norm(face.landmarks_68 - dlib_face.landmarks_68, axis=1) / eye_distance(
        dlib_face.landmarks_68
    )
    # Eyes, nose and lips (the points the swap aligns and warps on) within a tenth of the eye distance;
    # the jaw line is drawn differently by the two (the mesh's contour sits on the face's silhouette).
    assert error[27:].mean() < 0.1 and error.mean() < 0.15
    assert np.linalg.norm(face.landmarks_5 - dlib_face.landmarks_5, axis=1).max() < 0.15 * eye_distance(
        dlib_face.landmarks_68
    )


def test_a_rolled_face_is_meshed_upright_and_mapped_back(mesh, dlib_face, astronaut):
    """The crop turns with the eye line: the astronaut turned 40 degrees gets her points turned 40 too."""
    upright = mesh.refine(astronaut, [Face(box=dlib_face.box, score=1.0, landmarks_5=dlib_face.landmarks_5)])[
        0
    ]
    rotated, matrix = rotate_frame(astronaut, 40.0)
    moved = lambda pts: cv2.transform(pts.reshape(-1, 1, 2).astype(np.float32), matrix).reshape(-1, 2)  # noqa: E731
    eyes = moved(dlib_face.landmarks_5)
    centre = moved(((dlib_face.box[:2] + dlib_face.box[2:]) / 2)[None])[0]
    half = (dlib_face.box[2:] - dlib_face.box[:2]).max() / 2
    box = np.array([*(centre - half), *(centre + half)], np.float32)
    (turned,) = mesh.refine(rotated, [Face(box=box, score=1.0, landmarks_5=eyes)])
    expected = moved(upright.landmarks_68)
    error = np.linalg.norm(turned.landmarks_68 - expected, axis=1) / eye_distance(expected)
    assert error[27:].mean() < 0.08


def test_a_detection_without_a_face_has_a_low_presence_and_is_dropped(mesh):
    wall = np.full((300, 300, 3), (60, 120, 170), np.uint8)
    box = np.array([80, 80, 220, 220], np.float32)
    eyes = np.array([[120, 130], [180, 130], [150, 160], [125, 190], [175, 190]], np.float32)
    _, presence = mesh.mesh(wall, roi_from_box(box, 0.0))
    assert presence < MIN_PRESENCE
    assert mesh.refine(wall, [Face(box=box, score=1.0, landmarks_5=eyes)]) == []
