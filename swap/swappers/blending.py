"""Putting a colour-matched face into its picture: Poisson (standard) or multi-band (hq)."""

from __future__ import annotations

import cv2
import numpy as np


def poisson(warped: np.ndarray, roi: np.ndarray, mask: np.ndarray, membrane_limit: float) -> np.ndarray:
    """seamlessClone (NORMAL_CLONE) of `warped` into `roi` inside `mask`; the smooth correction it
    adds is kept within `membrane_limit` of its median, so a rim crossing hair or background
    cannot smear a dark or bright patch across the cheek."""
    bx, by, bw, bh = cv2.boundingRect(mask)
    # OpenCV 5's seamlessClone overwrites its mask argument: hand it a copy.
    cloned = cv2.seamlessClone(warped, roi, mask.copy(), (bx + bw // 2, by + bh // 2), cv2.NORMAL_CLONE)
    if membrane_limit > 0 and cv2.countNonZero(mask) > 64:
        membrane = cloned.astype(np.float32) - warped.astype(np.float32)
        centre = np.median(membrane[mask > 0], axis=0)
        membrane = centre + np.clip(membrane - centre, -membrane_limit, membrane_limit)
        return np.clip(warped.astype(np.float32) + membrane, 0, 255)
    return cloned.astype(np.float32)


def _levels(size: int, face_size: float) -> int:
    return int(np.clip(np.log2(max(face_size, 16) / 8), 2, 6)) if size >= 32 else 1


def multiband(warped: np.ndarray, roi: np.ndarray, alpha: np.ndarray, face_size: float) -> np.ndarray:
    """Laplacian-pyramid blend (Burt & Adelson): each frequency band is blended over a width that
    suits it, so fine detail meets at a sharp line and shading over a wide one — no halo, no seam.
    Outside the face `warped` must already equal `roi` (the caller fills it)."""
    levels = _levels(min(roi.shape[:2]), face_size)
    a = alpha.astype(np.float32)
    g_w = [warped.astype(np.float32)]
    g_r = [roi.astype(np.float32)]
    g_a = [a]
    for _ in range(levels):
        g_w.append(cv2.pyrDown(g_w[-1]))
        g_r.append(cv2.pyrDown(g_r[-1]))
        g_a.append(cv2.pyrDown(g_a[-1]))
    blended = g_r[-1] + g_a[-1][..., None] * (g_w[-1] - g_r[-1])
    for i in range(levels - 1, -1, -1):
        size = (g_w[i].shape[1], g_w[i].shape[0])
        lap_w = g_w[i] - cv2.pyrUp(g_w[i + 1], dstsize=size)
        lap_r = g_r[i] - cv2.pyrUp(g_r[i + 1], dstsize=size)
        band = lap_r + g_a[i][..., None] * (lap_w - lap_r)
        blended = cv2.pyrUp(blended, dstsize=size) + band
    return np.clip(blended, 0, 255)
