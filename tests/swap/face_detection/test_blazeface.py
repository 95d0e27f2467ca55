"""MediaPipe's BlazeFace as the engine decodes it: anchors, weighted NMS, faces on real pixels."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from swap.face_detection.blazeface import (
    FULL_RANGE,
    SHORT_RANGE,
    ssd_anchors,
    weighted_nms,
)
from swap.face_detection.retry import RetryingDetector
from swap.models import registry


def test_anchor_grids_match_the_models_outputs():
    assert len(ssd_anchors(FULL_RANGE)) == 2304  # one 48x48 layer, one anchor a cell
    short = ssd_anchors(SHORT_RANGE)
    assert len(short) == 896  # 16x16 x2, then 8x8 x6 (three merged stride-16 layers)
    assert np.allclose(short[0], [0.5 / 16, 0.5 / 16]) and np.allclose(short[512], [0.5 / 8, 0.5 / 8])


def test_weighted_nms_averages_a_cluster_by_score_and_keeps_separate_faces():
    boxes = np.array([[0, 0, 10, 10], [2, 0, 12, 10], [50, 50, 60, 60]], np.float32)
    points = np.zeros((3, 6, 2), np.float32)
    points[1] += 4
    scores = np.array([0.9, 0.3, 0.8])
    kept = weighted_nms(boxes, points, scores, 0.3)
    assert len(kept) == 2
    box, pts, score = kept[0]
    assert score == 0.9
    assert box[0] == pytest.approx(2 * 0.3 / 1.2) and pts[0, 0] == pytest.approx(4 * 0.3 / 1.2)
    assert np.allclose(kept[1][0], [50, 50, 60, 60])


@pytest.fixture(scope="module")
def blazeface(mesh_models_dir):
    return registry.load_adapter("blazeface_full_range", mesh_models_dir)


def test_finds_the_astronauts_face_with_her_eyes_where_dlib_puts_them(blazeface, pipeline, astronaut):
    (face,) = blazeface.detect(astronaut)
    (reference,) = pipeline.analyse(astronaut, embed=False)  # dlib HOG + 68 points
    eyes = reference.landmarks_5[:2]
    between = float(np.linalg.norm(eyes[0] - eyes[1]))
    assert np.linalg.norm(face.landmarks_5[:2] - eyes, axis=1).max() < 0.15 * between
    x1, y1, x2, y2 = face.box
    cx, cy = reference.landmarks_5[2]
    assert x1 < cx < x2 and y1 < cy < y2


def test_the_wide_pass_on_the_rewritten_model_puts_the_face_where_the_square_pass_does(blazeface, astronaut):
    """The model rewritten for a larger input (its anchors, its decode) against MediaPipe's own size:
    the astronaut's face, at 2.5x the square pass's scale in a 480x320 input, lands on the same box
    (within 10 % of its width: the two scales' boxes differ by up to 8 %)."""
    # 1040 x 700: a wide input's grid is not square
    picture = cv2.copyMakeBorder(cv2.resize(astronaut, (600, 600)), 50, 50, 50, 390, cv2.BORDER_REPLICATE)
    square, _, square_scores = blazeface._candidates(picture)
    wide, _, wide_scores = blazeface._candidates(picture, wide=True)
    best_square, best_wide = square[np.argmax(square_scores)], wide[np.argmax(wide_scores)]
    overlap = np.minimum(best_square[2:], best_wide[2:]) - np.maximum(best_square[:2], best_wide[:2])
    area = np.prod(best_square[2:] - best_square[:2])
    assert np.prod(np.clip(overlap, 0, None)) / area > 0.8
    assert np.abs(best_wide - best_square).max() < 0.1 * (best_square[2] - best_square[0])


def test_a_small_face_in_a_large_frame_is_found_where_it_is(blazeface, astronaut):
    face_crop = astronaut[40:220, 150:300]
    small = cv2.resize(face_crop, (60, 72), interpolation=cv2.INTER_AREA)
    frame = np.full((720, 1280, 3), 90, np.uint8)
    frame[500:572, 900:960] = small
    faces = blazeface.detect(frame)
    assert len(faces) == 1
    x1, y1, x2, y2 = faces[0].box
    assert 890 < (x1 + x2) / 2 < 970 and 495 < (y1 + y2) / 2 < 580


def test_no_face_on_a_blank_or_noisy_frame(blazeface):
    rng = np.random.default_rng(3)
    assert blazeface.detect(np.full((480, 640, 3), 127, np.uint8)) == []
    assert blazeface.detect(rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)) == []


def test_largest_only_runs_the_wide_pass_alone_after_the_square_pass_found_nothing(blazeface, astronaut):
    """A lone small face in a large frame (a one-face job's target): the square pass without the
    wide one finds nothing, then the wide pass alone finds the face the full search finds, and
    the square pass is not run a second time (it cost ~4 of the ~25 ms)."""
    face_crop = astronaut[40:220, 150:300]
    frame = np.full((720, 1280, 3), 90, np.uint8)
    frame[500:572, 900:960] = cv2.resize(face_crop, (60, 72), interpolation=cv2.INTER_AREA)
    detector = RetryingDetector(blazeface, angles=())
    (every,) = detector.detect(frame)
    passes = []
    run_pass = blazeface._candidates

    def counted(bgr, *, wide=False):
        passes.append("wide" if wide else "square")
        return run_pass(bgr, wide=wide)

    blazeface._candidates = counted
    try:
        (largest,) = detector.detect(frame, largest_only=True)
    finally:
        del blazeface._candidates
    assert passes == ["square", "wide"]
    assert detector.last_report.tries == ["blazeface_full_range@upsample0", "blazeface_full_range@small"]
    assert detector.last_report.found_by == "blazeface_full_range@small"
    assert np.allclose(largest.box, every.box, atol=0.5) and largest.score == pytest.approx(every.score)


def test_the_wide_pass_alone_finds_nothing_where_the_frame_is_too_small_for_it(blazeface, astronaut):
    assert blazeface.detect(astronaut, upsample=0)  # 512 px: the square pass is the whole search
    assert blazeface.detect_small(astronaut) == []
