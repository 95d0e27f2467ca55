"""What covers the target's face (a hand, a microphone, sunglasses, a bar), without a model.

A skin model is fitted to the target's own cheeks and forehead (robust medians of Lab chroma
and lightness, away from eyes, brows, nostrils and lips); pixels inside the face that are
off the skin's hue, far less or far more saturated, or much darker than it are occluders, and
large connected groups of them are cut out of the swap mask so the swap never paints over them.
"""

from __future__ import annotations

import cv2
import numpy as np

EYES = (slice(36, 42), slice(42, 48))
BROWS = (slice(17, 22), slice(22, 27))
NOSE_LOWER = slice(31, 36)
MOUTH_OUTER = slice(48, 60)


def _poly(mask: np.ndarray, points: np.ndarray, value: int = 255) -> None:
    cv2.fillPoly(mask, [np.round(points).astype(np.int32)], value)


def _disk(radius: int) -> np.ndarray:
    r = max(1, radius)
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))


def face_region(shape: tuple[int, int], points_68: np.ndarray) -> np.ndarray:
    mask = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(mask, cv2.convexHull(np.round(points_68).astype(np.int32)), 255)
    return mask


def skin_sample_mask(shape: tuple[int, int], points_68: np.ndarray, face_size: float) -> np.ndarray:
    """Where to learn the target's skin: the face minus eyes, brows, nostrils and lips, inset."""
    face = cv2.erode(face_region(shape, points_68), _disk(int(0.05 * face_size)))
    features = np.zeros(shape, np.uint8)
    for part in EYES:
        _poly(features, points_68[part])
    for part in BROWS:
        cv2.polylines(
            features, [np.round(points_68[part]).astype(np.int32)], False, 255, max(1, int(0.03 * face_size))
        )
    _poly(features, points_68[MOUTH_OUTER])
    nose = points_68[NOSE_LOWER]
    _poly(features, np.vstack([nose, points_68[[33]] + [0, 0.02 * face_size]]))
    features = cv2.dilate(features, _disk(int(0.05 * face_size)))
    return face & ~features


def occlusion_mask(
    image: np.ndarray,
    points_68: np.ndarray,
    face_size: float,
    *,
    region_points: np.ndarray | None = None,
    grayscale: bool = False,
    rim: float = 0.0,
) -> np.ndarray:
    """0/255: pixels inside the face (the hull of `region_points`, default the 68 points) that
    are not the target's skin, eyes or mouth. `rim` > 0 (x face size): in a band that wide inside the
    hull's edge, paler or less coloured pixels count too, however few (`rim_hair`)."""
    shape = image.shape[:2]
    sample = skin_sample_mask(shape, points_68, face_size)
    if cv2.countNonZero(sample) < 64:
        return np.zeros(shape, np.uint8)
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32)
    light = lab[..., 0]
    chroma = lab[..., 1:] - 128.0
    sel = sample > 0
    l_skin = float(np.median(light[sel]))
    c_skin = np.median(chroma[sel], axis=0)
    c_norm = float(np.linalg.norm(c_skin))
    # Darker than a third of the skin's median and than 0.6 of its darkest twentieth: in a dim
    # picture the tone curve spreads the skin's own shading (its darkest twentieth at 0.2-0.45 of its
    # median, 0.5-0.7 in daylight), and its shadows passed for dark occluders.
    too_dark = light < min(0.35 * l_skin, 0.6 * float(np.percentile(light[sel], 5)))
    too_bright = light > min(250.0, 1.5 * l_skin + 25.0)
    off_hue = np.zeros(shape, bool)
    along = np.ones(shape, np.float32)
    if grayscale or c_norm < 3.0:
        occluded = too_dark | too_bright
    else:
        unit = c_skin / c_norm
        along = (chroma @ unit) / c_norm  # saturation relative to the skin's, along its hue
        across = (chroma[..., 0] * unit[1] - chroma[..., 1] * unit[0]) / c_norm  # off the skin's hue
        off_hue = np.abs(across) > 0.7
        # Greyer than the skin at that lightness: a shadow's colour fades with its light (a dim
        # picture's shaded cheek is no grey occluder).
        faded = along < 0.3 * np.clip(light / max(l_skin, 1.0), 0.25, 1.0)
        occluded = off_hue | faded | (along > 2.6) | too_dark | too_bright
    face = face_region(shape, points_68 if region_points is None else region_points)
    # Eye openings, the inner mouth and the brows are never occluders by themselves (dark or white
    # by nature; the eyes stay the target's anyway when they differ; dark brows are features).
    keep = np.zeros(shape, np.uint8)
    for part in EYES:
        _poly(keep, points_68[part])
    mouth = np.zeros(shape, np.uint8)
    _poly(mouth, points_68[60:68])
    mouth = cv2.dilate(mouth, _disk(int(0.02 * face_size)))
    for part in BROWS:
        cv2.polylines(
            keep, [np.round(points_68[part]).astype(np.int32)], False, 255, max(1, int(0.05 * face_size))
        )
    keep = cv2.dilate(keep, _disk(int(0.02 * face_size))) | mouth
    occluded = (occluded.astype(np.uint8) * 255) & face & ~keep
    occluded = cv2.morphologyEx(occluded, cv2.MORPH_OPEN, _disk(max(1, int(0.01 * face_size))))
    occluded = cv2.morphologyEx(occluded, cv2.MORPH_CLOSE, _disk(max(1, int(0.02 * face_size))))
    # Small specks (pores, stubble, a mole) are skin detail, not an occluder.
    count, labels, stats, _ = cv2.connectedComponentsWithStats(occluded, connectivity=8)
    min_area = 0.006 * cv2.countNonZero(face)
    big = np.flatnonzero(stats[:, cv2.CC_STAT_AREA] >= min_area)
    out = np.isin(labels, big[big > 0]).astype(np.uint8) * 255
    # An occluder across the lips goes on into the mouth where the colour stays off the skin's hue
    # (a blue bar, a glove): left out there it was painted over, and tinted the face with its colour.
    inside = (off_hue.astype(np.uint8) * 255) & mouth & face
    if out.any() and inside.any():
        _, labels = cv2.connectedComponents(out | inside, connectivity=8)
        touching = np.unique(labels[out > 0])
        out = np.isin(labels, touching[touching > 0]).astype(np.uint8) * 255
    if rim > 0 and not grayscale and c_norm >= 3.0:
        out |= rim_hair(face, light, along, l_skin, points_68, face_size, rim)
    return cv2.dilate(out, _disk(int(0.015 * face_size)))


def rim_hair(
    face: np.ndarray,
    light: np.ndarray,
    along: np.ndarray,
    l_skin: float,
    points_68: np.ndarray,
    face_size: float,
    rim: float,
) -> np.ndarray:
    """0/255: grey or white hair and blown-out light along the sides of the face: in the band `rim`
    x face size inside `face` (0/255), below the brows, pixels both much lighter than the skin
    (1.25x its median lightness + 15) and far less coloured (under half its saturation). The mesh's
    outline runs over the temples' hair; a source's grey hair there is too close to skin for
    `occlusion_mask`'s thresholds, in pieces under its smallest occluder, and was warped into the
    target as a white streak beside the eye. Not above the brows: a shine on the forehead is as
    pale, and is the person's."""
    band = face & ~cv2.erode(face, _disk(int(rim * face_size)))
    up = points_68[27] - points_68[8]
    up = up / (float(np.linalg.norm(up)) or 1.0)
    ys, xs = np.nonzero(band)
    above = xs * up[0] + ys * up[1] > float((points_68[17:27] @ up).mean())
    band[ys[above], xs[above]] = 0
    pale = ((light > 1.25 * l_skin + 15.0) & (along < 0.5)).astype(np.uint8) * 255
    pale = cv2.morphologyEx(pale & band, cv2.MORPH_OPEN, _disk(max(1, int(0.005 * face_size))))
    return cv2.morphologyEx(pale, cv2.MORPH_CLOSE, _disk(max(1, int(0.015 * face_size)))) & face
