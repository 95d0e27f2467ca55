"""dlib face analysis on the astronaut portrait."""

from __future__ import annotations

import cv2
import numpy as np

from swap.face_landmarks.dlib_shape import five_from_68
from swap.face_recognition.dlib_resnet import dlib_distance


def test_finds_the_astronaut_face_with_landmarks_inside_its_box(pipeline, astronaut):
    faces = pipeline.analyse(astronaut)

    assert len(faces) == 1
    face = faces[0]
    x1, y1, x2, y2 = face.box
    assert 150 < (x1 + x2) / 2 < 300 and 60 < (y1 + y2) / 2 < 200  # her face, not the mission patch
    pad = 0.15 * (x2 - x1)
    pts = face.landmarks_68
    assert pts.shape == (68, 2)
    assert np.all(pts[:, 0] > x1 - pad) and np.all(pts[:, 0] < x2 + pad)
    assert np.all(pts[:, 1] > y1 - pad) and np.all(pts[:, 1] < y2 + pad)
    # Right eye (image left) left of the other eye, eyes above the nose, nose above the mouth.
    left_eye, right_eye, nose, mouth_l, mouth_r = face.landmarks_5
    assert left_eye[0] < right_eye[0]
    assert max(left_eye[1], right_eye[1]) < nose[1] < min(mouth_l[1], mouth_r[1])
    np.testing.assert_allclose(face.landmarks_5, five_from_68(pts))
    assert face.embedding.shape == (128,) and face.embedding_kind == "dlib128"


def test_embedding_is_stable_under_shift_and_rescale(pipeline, astronaut):
    original = pipeline.analyse(astronaut)[0]
    moved = cv2.resize(astronaut[12:, 20:], None, fx=0.8, fy=0.8, interpolation=cv2.INTER_AREA)
    copy = pipeline.analyse(moved)[0]

    assert dlib_distance(original.embedding, copy.embedding) < 0.3
    # The box moved with the image.
    np.testing.assert_allclose(copy.box, (original.box - [20, 12, 20, 12]) * 0.8, atol=12)


def test_detects_on_a_downscaled_copy_of_large_frames(pipeline, astronaut):
    big = cv2.resize(astronaut, (2048, 2048), interpolation=cv2.INTER_CUBIC)  # over detect_max_side
    small_face = pipeline.analyse(astronaut, embed=False)[0]
    big_face = pipeline.analyse(big, embed=False)[0]

    np.testing.assert_allclose(big_face.box / 4, small_face.box, atol=8)


def test_no_face_on_a_photo_without_people(pipeline):
    from skimage import data

    coffee = cv2.cvtColor(data.coffee(), cv2.COLOR_RGB2BGR)
    assert pipeline.analyse(coffee) == []
