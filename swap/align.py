"""Face alignment, crop masks and paste-back, matching FaceFusion's face_helper / face_masker.

Every ONNX model sees a face warped onto a fixed 5-point template; its output is warped back
with the inverse similarity transform and blended in through a soft mask.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

# Normalised 5-point templates (left eye, right eye, nose tip, mouth left, mouth right).
TEMPLATES: dict[str, np.ndarray] = {
    "arcface_112_v1": np.array(
        [[0.35473214, 0.45658929], [0.64526786, 0.45658929], [0.50000000, 0.61154464],
         [0.37913393, 0.77687500], [0.62086607, 0.77687500]], dtype=np.float32),
    "arcface_112_v2": np.array(
        [[0.34191607, 0.46157411], [0.65653393, 0.45983393], [0.50022500, 0.64050536],
         [0.37097589, 0.82469196], [0.63151696, 0.82325089]], dtype=np.float32),
    "arcface_128": np.array(
        [[0.36167656, 0.40387734], [0.63696719, 0.40235469], [0.50019687, 0.56044219],
         [0.38710391, 0.72160547], [0.61507734, 0.72034453]], dtype=np.float32),
    "ffhq_512": np.array(
        [[0.37691676, 0.46864664], [0.62285697, 0.46912813], [0.50123859, 0.61331904],
         [0.39308822, 0.72541100], [0.61150205, 0.72490465]], dtype=np.float32),
}  # fmt: skip


def template_points(template: str, size: int) -> np.ndarray:
    """The template's 5 points in pixels of a size×size crop."""
    return TEMPLATES[template] * np.float32(size)


def estimate_matrix(landmarks_5: np.ndarray, template: str, size: int) -> np.ndarray:
    """(2, 3) similarity transform frame → crop. RANSAC with a huge threshold keeps all 5 points
    as inliers (FaceFusion's choice), so this is effectively a least-squares fit."""
    src = np.asarray(landmarks_5, dtype=np.float32).reshape(5, 2)
    matrix, _ = cv2.estimateAffinePartial2D(
        src, template_points(template, size), method=cv2.RANSAC, ransacReprojThreshold=100
    )
    if matrix is None:  # degenerate landmarks (all points equal): fall back to a pure shift
        matrix = np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float64)
    return matrix


def warp_face(
    frame: np.ndarray, landmarks_5: np.ndarray, template: str, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Aligned size×size crop (same dtype as `frame`) and the frame → crop matrix."""
    matrix = estimate_matrix(landmarks_5, template, size)
    crop = cv2.warpAffine(frame, matrix, (size, size), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_AREA)
    return crop, matrix


def warp_faces(
    frame: np.ndarray, landmarks: Sequence[np.ndarray], template: str, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """N faces of one frame → crops (N, S, S, 3) and matrices (N, 2, 3)."""
    crops = np.empty((len(landmarks), size, size, frame.shape[2]), dtype=frame.dtype)
    matrices = np.empty((len(landmarks), 2, 3), dtype=np.float64)
    for i, points in enumerate(landmarks):
        crops[i], matrices[i] = warp_face(frame, points, template, size)
    return crops, matrices


def box_mask(
    size: int, blur: float = 0.3, padding: tuple[float, float, float, float] = (0, 0, 0, 0)
) -> np.ndarray:
    """Soft rectangle over the crop: float32 (size, size) in [0, 1].

    padding is (top, right, bottom, left) in percent of the crop. The zeroed border is at least
    half the blur width so the blurred edge reaches 0 before the crop's edge (no seam).
    """
    blur_amount = int(size * 0.5 * blur)
    blur_area = max(blur_amount // 2, 1)
    top, right, bottom, left = (int(size * p / 100) for p in padding)
    mask = np.ones((size, size), dtype=np.float32)
    mask[: max(blur_area, top), :] = 0
    mask[-max(blur_area, bottom) :, :] = 0
    mask[:, : max(blur_area, left)] = 0
    mask[:, -max(blur_area, right) :] = 0
    if blur_amount > 0:
        mask = cv2.GaussianBlur(mask, (0, 0), blur_amount * 0.25)
    return mask


def soften_mask(mask: np.ndarray) -> np.ndarray:
    """FaceFusion's treatment of content masks: blur σ 5, clip to [.5, 1], rescale to [0, 1]."""
    mask = cv2.GaussianBlur(mask.astype(np.float32), (0, 0), 5).clip(0.5, 1)
    return (mask - 0.5) * 2


def hull_mask_68(size: int, landmarks_68: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Convex hull of the 68 landmarks (frame coordinates) in crop space, softened."""
    points = cv2.transform(np.asarray(landmarks_68, dtype=np.float32).reshape(-1, 1, 2), matrix).reshape(
        -1, 2
    )
    hull = cv2.convexHull(np.round(points).astype(np.int32))
    mask = np.zeros((size, size), dtype=np.float32)
    cv2.fillConvexPoly(mask, hull, 1.0)
    return soften_mask(mask)


def combine_masks(*masks: np.ndarray) -> np.ndarray:
    return np.minimum.reduce([m.astype(np.float32) for m in masks]).clip(0, 1)


def transform_points(points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    return cv2.transform(np.asarray(points, dtype=np.float32).reshape(-1, 1, 2), matrix).reshape(-1, 2)


def paste_back(frame: np.ndarray, crop: np.ndarray, mask: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Warp `crop` (BGR, uint8 or float in 0–255) and `mask` back into a copy of `frame`.

    Only the frame rectangle the inverse-warped crop covers is touched (the mask is 0 outside
    it anyway); that keeps paste-back cost proportional to the face, not the frame.
    """
    height, width = frame.shape[:2]
    size_h, size_w = crop.shape[:2]
    inverse = cv2.invertAffineTransform(matrix)
    corners = transform_points(np.array([[0, 0], [size_w, 0], [0, size_h], [size_w, size_h]]), inverse)
    x1, y1 = np.floor(corners.min(axis=0)).astype(int)
    x2, y2 = np.ceil(corners.max(axis=0)).astype(int)
    x1, y1 = max(x1, 0), max(y1, 0)
    x2, y2 = min(x2, width), min(y2, height)
    result = frame.copy()
    if x2 <= x1 or y2 <= y1:
        return result
    # Inverse warp straight into the region: shift the inverse transform by the region origin.
    region_inverse = inverse.copy()
    region_inverse[:, 2] -= (x1, y1)
    region_size = (x2 - x1, y2 - y1)
    region_mask = cv2.warpAffine(mask.astype(np.float32), region_inverse, region_size).clip(0, 1)[..., None]
    region_crop = cv2.warpAffine(
        crop.astype(np.float32), region_inverse, region_size, borderMode=cv2.BORDER_REPLICATE
    )
    region = frame[y1:y2, x1:x2].astype(np.float32)
    blended = region * (1 - region_mask) + region_crop * region_mask
    result[y1:y2, x1:x2] = np.clip(np.round(blended), 0, 255).astype(frame.dtype)
    return result


def paste_back_many(
    frame: np.ndarray,
    crops: Sequence[np.ndarray],
    masks: Sequence[np.ndarray],
    matrices: Sequence[np.ndarray],
) -> np.ndarray:
    """Paste N crops one after another (later faces win where they overlap)."""
    result = frame
    for crop, mask, matrix in zip(crops, masks, matrices, strict=True):
        result = paste_back(result, crop, mask, matrix)
    return result if result is not frame else frame.copy()
