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


def _texture_gain(lap_w: np.ndarray, lap_r: np.ndarray, a: np.ndarray, mixed: np.ndarray) -> np.ndarray:
    """Where a band mixes two unrelated textures (the face's and the picture's), their average is
    flatter than either (half the energy at alpha 0.5): the gain that restores the energy expected
    from alpha, from local energies, so the rim keeps the grain of what it joins. Where the two
    agree (an edge running across the rim) the mix already has that energy and the gain is 1."""
    sigma = 2.0
    e_w = cv2.GaussianBlur((lap_w * lap_w).sum(axis=2), (0, 0), sigma)
    e_r = cv2.GaussianBlur((lap_r * lap_r).sum(axis=2), (0, 0), sigma)
    e_mix = cv2.GaussianBlur((mixed * mixed).sum(axis=2), (0, 0), sigma)
    wanted = a * e_w + (1 - a) * e_r
    gain = np.clip(np.sqrt((wanted + 1e-2) / (e_mix + 1e-2)), 1.0, 1.5)
    # Only inside the join (1 at alpha 0.5, 0 at either end): at its outer end the face's band still
    # holds the step where the filled-in picture starts, which is no texture to keep.
    return 1.0 + 4.0 * a * (1.0 - a) * (gain - 1.0)


def multiband(warped: np.ndarray, roi: np.ndarray, alpha: np.ndarray, levels: int) -> np.ndarray:
    """Laplacian-pyramid blend (Burt & Adelson) over `levels` octaves: each band is joined over a
    width that suits it, and its texture energy is kept through the join (`_texture_gain`), so the
    rim has neither a soft halo nor a line. Outside the face `warped` must already equal `roi` (the
    caller fills it); few levels, because the low frequencies are already matched (Poisson) and a
    deep pyramid would pull the target's face shape in from the rim."""
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
        band *= _texture_gain(lap_w, lap_r, g_a[i], band)[..., None]
        blended = cv2.pyrUp(blended, dstsize=size) + band
    return np.clip(blended, 0, 255)
