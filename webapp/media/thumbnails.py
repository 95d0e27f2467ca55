"""Gallery thumbnails: a small WebP of a result, cropped to the gallery's card shape around the faces.

The dashboard shows results at most a few hundred pixels wide; loading the full-size results made a
gallery of 17 cards weigh 3.3 MB. A crop that ignored the faces could cut them off, so the
crop is the largest card-shaped window that contains every swapped face (or is centred on them when
they cannot all fit).
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

THUMBNAIL_MAX_SIDE_PX = 480
THUMBNAIL_ASPECT = 16 / 10  # the dashboard card's picture (width / height)
THUMBNAIL_QUALITY = 80
THUMBNAIL_MEDIA_TYPE = "image/webp"
# The result in the site's before/after view (marked and labelled like the download): big enough
# for the view on a high-density screen, small enough not to stand in for the full-size download.
PREVIEW_MAX_SIDE_PX = 1280
PREVIEW_QUALITY = 85


def crop_box(width: int, height: int, face_boxes: Sequence[Sequence[float]], *, aspect: float = THUMBNAIL_ASPECT
             ) -> tuple[int, int, int, int]:
    """(x1, y1, x2, y2): the largest `aspect`-shaped window of a width×height image, placed so the
    faces' bounding box is inside it (centred on the faces where the window has room to move)."""
    if width / height > aspect:
        crop_w, crop_h = max(1, round(height * aspect)), height
    else:
        crop_w, crop_h = width, max(1, round(width / aspect))
    if face_boxes:
        boxes = np.asarray(face_boxes, dtype=float).reshape(-1, 4)
        fx1, fy1 = boxes[:, 0].min(), boxes[:, 1].min()
        fx2, fy2 = boxes[:, 2].max(), boxes[:, 3].max()
        # Faces sit a little above the middle of a pleasant crop: leave room for the chin and neck.
        centre_x, centre_y = (fx1 + fx2) / 2, (fy1 + fy2) / 2 + (fy2 - fy1) * 0.15
    else:
        centre_x, centre_y = width / 2, height / 2
    x1 = int(round(min(max(centre_x - crop_w / 2, 0), width - crop_w)))
    y1 = int(round(min(max(centre_y - crop_h / 2, 0), height - crop_h)))
    if face_boxes:  # centring may still cut a face the window can hold: shift it back over the face
        x1 = int(min(max(x1, round(fx2) - crop_w), max(0, round(fx1))))
        y1 = int(min(max(y1, round(fy2) - crop_h), max(0, round(fy1))))
        x1, y1 = min(max(x1, 0), width - crop_w), min(max(y1, 0), height - crop_h)
    return x1, y1, x1 + crop_w, y1 + crop_h


def thumbnail_frame(image_bgr: np.ndarray, face_boxes: Sequence[Sequence[float]] = ()) -> np.ndarray:
    """The gallery card's picture: card-shaped, with the faces in it, at most THUMBNAIL_MAX_SIDE_PX on its longer side."""
    height, width = image_bgr.shape[:2]
    x1, y1, x2, y2 = crop_box(width, height, face_boxes)
    return _fit(image_bgr[y1:y2, x1:x2], THUMBNAIL_MAX_SIDE_PX)


def preview_size(width: int, height: int) -> tuple[int, int]:
    """The compare view picture's size for a result of this size (as preview_frame makes it)."""
    return _fit_size(width, height, PREVIEW_MAX_SIDE_PX)


def preview_frame(image_bgr: np.ndarray) -> np.ndarray:
    """The compare view's picture: uncropped, at most PREVIEW_MAX_SIDE_PX on its longer side."""
    return _fit(image_bgr, PREVIEW_MAX_SIDE_PX)


def _fit_size(width: int, height: int, max_side_px: int) -> tuple[int, int]:
    scale = min(1.0, max_side_px / max(height, width))
    if scale >= 1.0:
        return width, height
    return max(1, round(width * scale)), max(1, round(height * scale))


def _fit(image_bgr: np.ndarray, max_side_px: int) -> np.ndarray:
    """Scaled down to max_side_px on its longer side (never up), by pixel area: halved first while
    that stays above the size (OpenCV averages whole 2x2 blocks fast; a fractional factor goes its
    slow general way): a 1152x720 crop to 480x300 in 1.6 instead of 3.3 ms, within one level on
    average of the one-step reduction."""
    height, width = image_bgr.shape[:2]
    size = _fit_size(width, height, max_side_px)
    if size == (width, height):
        return image_bgr
    while image_bgr.shape[1] // 2 >= size[0] and image_bgr.shape[0] // 2 >= size[1]:
        half = (image_bgr.shape[1] // 2, image_bgr.shape[0] // 2)
        image_bgr = cv2.resize(image_bgr[: half[1] * 2, : half[0] * 2], half, interpolation=cv2.INTER_AREA)
    return cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA)
