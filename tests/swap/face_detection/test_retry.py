"""Faces HOG misses: rotated copies are searched, then the fallback detector; all reported."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from swap.face_detection.retry import RetryingDetector, rotate_frame
from swap.pipeline import RETRIED_MIN_PRESENCE, detect_with_landmarks
from swap.types import Face


def _rotated(image: np.ndarray, angle: float) -> tuple[np.ndarray, np.ndarray]:
    rotated, matrix = rotate_frame(image, angle)
    return rotated, matrix


def test_a_tilted_face_is_found_by_an_angle_retry_with_landmarks_in_place(pipeline, astronaut):
    upright = pipeline.analyse(astronaut, embed=False)[0]
    tilted, matrix = _rotated(astronaut, 60)
    # HOG alone misses a face tilted by 60 degrees (it copes up to about 40).
    assert pipeline.detector.detect(tilted, retries=False) == []
    report: dict = {}
    faces = pipeline.analyse(tilted, embed=False, report=report)
    assert len(faces) == 1
    assert report["found_by"].startswith("dlib_hog@")
    assert report["tries"][0] == "dlib_hog" and report["retry_ms"] > 0
    # The landmarks were fitted upright and mapped back: they sit on the tilted face's features.
    expected = (np.c_[upright.landmarks_5, np.ones(5)] @ matrix.T).astype(np.float32)
    eye_distance = float(np.linalg.norm(expected[0] - expected[1]))
    error = np.linalg.norm(faces[0].landmarks_5 - expected, axis=1)
    assert error.max() < 0.2 * eye_distance


def test_fast_mode_does_not_retry(pipeline, astronaut):
    tilted, _ = _rotated(astronaut, 60)
    assert pipeline.analyse(tilted, embed=False, mode="fast") == []


class _Fixed:
    def __init__(self, name: str, faces: list[Face]) -> None:
        self.name, self.faces, self.calls = name, faces, 0

    def detect(self, frame: np.ndarray) -> list[Face]:
        self.calls += 1
        return list(self.faces)


def test_the_fallback_runs_only_when_every_retry_missed():
    face = Face(
        box=np.array([10, 10, 50, 50], np.float32), score=1.0, landmarks_5=np.zeros((5, 2), np.float32)
    )
    primary, fallback = _Fixed("hog", []), _Fixed("cnn", [face])
    detector = RetryingDetector(primary, angles=(-30, 30), fallback=lambda: fallback)
    frame = np.zeros((64, 64, 3), np.uint8)
    assert detector.detect(frame) == [face]
    assert primary.calls == 3 and fallback.calls == 1
    assert detector.last_report.tries == ["hog", "hog@-30", "hog@30", "cnn"]
    assert detector.last_report.found_by == "cnn"

    found = RetryingDetector(_Fixed("hog", [face]), fallback=lambda: pytest.fail("not needed"))
    assert found.detect(frame) == [face] and found.last_report.retry_ms == 0.0


def test_a_try_whose_faces_the_check_drops_counts_as_a_miss():
    """The landmarker's check (Face Mesh drops a candidate it finds no face in) runs on each try; a
    try it keeps nothing of does not end the search. Retries and the fallback are checked as
    retried (the check may ask more of them)."""
    false = Face(box=np.array([4, 4, 20, 20], np.float32), score=0.7, landmarks_5=np.zeros((5, 2), np.float32))
    true = Face(box=np.array([30, 30, 60, 60], np.float32), score=0.9, landmarks_5=np.zeros((5, 2), np.float32))

    class _FalseUprightTrueRotated:
        name = "blaze"

        def detect(self, frame: np.ndarray) -> list[Face]:
            return [false] if frame.shape[:2] == (64, 64) else [true]  # a rotated copy is larger

    checked: list[tuple[float, bool]] = []

    def verify(faces: list[Face], *, retried: bool) -> list[Face]:
        checked.append((faces[0].score, retried))
        return [f for f in faces if f.score > 0.8]

    detector = RetryingDetector(_FalseUprightTrueRotated(), angles=(-30, 30))
    frame = np.zeros((64, 64, 3), np.uint8)
    (face,) = detector.detect(frame, verify=verify)
    assert face.score == 0.9 and face.angle == -30
    assert detector.last_report.found_by == "blaze@-30"
    assert checked == [(0.7, False), (0.9, True)]

    fallback = _Fixed("hog", [true])
    nothing = RetryingDetector(_Fixed("blaze", [false]), angles=(90,), fallback=lambda: fallback)
    checked.clear()
    (found,) = nothing.detect(frame, verify=verify)
    assert found is true and checked == [(0.7, False), (0.7, True), (0.9, True)]
    assert nothing.last_report.tries == ["blaze", "blaze@90", "hog"]
    assert nothing.last_report.found_by == "hog" and fallback.calls == 1


def test_dlib_cnn_finds_the_astronaut(astronaut):
    from swap.face_detection.dlib_cnn import DlibCnnDetector

    faces = DlibCnnDetector(max_side=512).detect(astronaut)
    assert len(faces) == 1
    x1, y1, x2, y2 = faces[0].box
    assert 150 < (x1 + x2) / 2 < 300 and 50 < (y1 + y2) / 2 < 200  # her face, not the patch


def test_faces_picked_by_number_are_found_as_the_upload_page_numbered_them(pipeline, astronaut):
    from swap.errors import NoFaceFound
    from swap.types import SwapOptions

    tilted, _ = _rotated(astronaut, 60)
    source = pipeline.prepare_source([astronaut])
    with pytest.raises(NoFaceFound):
        pipeline.swap_frame(source, tilted, SwapOptions(mode="fast"))
    # face_index was chosen on the upload page's full detection: fast must search the same way.
    result = pipeline.swap_frame(source, tilted, SwapOptions(mode="fast", face_index=0))
    assert result.mode == "fast" and len(result.faces_used) == 1
    assert result.detection["found_by"].startswith("dlib_hog@")


def _with_small_face(astronaut: np.ndarray, *, big: bool) -> np.ndarray:
    """A grey 1000x700 picture with the astronaut's head at ~55 px (found only by HOG's upsampled
    search) and, if `big`, her whole photo at 512 px beside it."""
    canvas = np.full((700, 1000, 3), 128, np.uint8)
    head = cv2.resize(astronaut[20:260, 100:300], (100, 120), interpolation=cv2.INTER_AREA)
    canvas[500:620, 860:960] = head
    if big:
        canvas[:512, :512] = astronaut
    return canvas


def test_largest_only_skips_the_upsampled_search_when_a_big_face_is_found(pipeline, astronaut):
    detector = pipeline.detector
    picture = _with_small_face(astronaut, big=True)
    every = detector.detect(picture)
    assert len(every) == 2 and detector.last_report.tries == ["dlib_hog"]

    largest = detector.detect(picture, largest_only=True)
    assert detector.last_report.tries == ["dlib_hog@upsample0"]
    assert detector.last_report.found_by == "dlib_hog@upsample0"
    assert len(largest) == 1  # the small face was not searched for
    overlap = _iou(largest[0].box, max(every, key=lambda f: f.area).box)
    assert overlap > 0.7  # the same face


def test_largest_only_still_finds_a_small_face_alone(pipeline, astronaut):
    detector = pipeline.detector
    picture = _with_small_face(astronaut, big=False)
    faces = detector.detect(picture, largest_only=True)
    assert len(faces) == 1
    assert detector.last_report.tries == ["dlib_hog@upsample0", "dlib_hog"]
    assert detector.last_report.found_by == "dlib_hog"


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x2 - x1) * max(0.0, y2 - y1)
    areas = [(box[2] - box[0]) * (box[3] - box[1]) for box in (a, b)]
    return float(inter / (sum(areas) - inter))


def test_a_face_only_a_retry_finds_is_kept_when_the_mesh_is_sure_of_it():
    """Each further try is another chance at a false face (a rocket's nose at 0.83, the Hubble deep
    field at 0.28): faces of a rotated copy or the fallback need Face Mesh's presence 0.9; an upright
    one is kept from the mesh's own floor (a face half behind a hand)."""
    unsure = Face(box=np.array([10, 10, 50, 50], np.float32), score=0.7, landmarks_5=np.zeros((5, 2), np.float32))
    frame = np.zeros((64, 64, 3), np.uint8)

    def refine(presence):
        return lambda faces: [replace(face, mesh_presence=presence) for face in faces]

    upright = RetryingDetector(_Fixed("blaze", [unsure]), angles=(90,))
    assert len(detect_with_landmarks(upright, refine(0.5), frame)) == 1

    class _OnlyRotated(_Fixed):
        def detect(self, image):
            return list(self.faces) if image.shape[:2] != (64, 64) else []  # a rotated copy is larger

    rotated = RetryingDetector(_OnlyRotated("blaze", [unsure]), angles=(30,))
    assert detect_with_landmarks(rotated, refine(0.5), frame) == []
    assert rotated.last_report.tries == ["blaze", "blaze@30"] and rotated.last_report.found_by is None
    (sure,) = detect_with_landmarks(rotated, refine(RETRIED_MIN_PRESENCE), frame)
    assert sure.angle == 30
