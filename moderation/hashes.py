"""Content fingerprints for the known-bad list: SHA-256 of the bytes and 64-bit perceptual hashes.

pHash (DCT of a 32×32 grey thumbnail) survives re-encoding, resizing and small edits, so a
re-upload of rejected content is caught without running any model; dHash is kept in the audit
record as a second opinion. Hashes are 16 hex characters (64 bits).
"""

from __future__ import annotations

import hashlib

import cv2
import numpy as np


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _grey(image_bgr: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY) if image_bgr.ndim == 3 else image_bgr


def _bits_to_hex(bits: np.ndarray) -> str:
    return np.packbits(bits.astype(np.uint8).ravel()).tobytes().hex()


def dhash(image_bgr: np.ndarray) -> str:
    """Difference hash: is each pixel of a 9×8 thumbnail brighter than its right neighbour."""
    return _dhash_bits(thumbnails(_grey(image_bgr), [(9, 8)])[0])


def phash(image_bgr: np.ndarray) -> str:
    """Perceptual hash: the 8×8 lowest DCT frequencies of a 32×32 thumbnail against their median."""
    return _phash_bits(thumbnails(_grey(image_bgr), [(32, 32)])[0])


def phash_dhash(image_bgr: np.ndarray) -> tuple[str, str]:
    """Both perceptual hashes from one grey conversion and one pass over the full image (the same
    values)."""
    small32, small9 = thumbnails(_grey(image_bgr), [(32, 32), (9, 8)])
    return _phash_bits(small32), _dhash_bits(small9)


def _dhash_bits(small: np.ndarray) -> str:
    small = small.astype(np.int16)
    return _bits_to_hex(small[:, 1:] > small[:, :-1])


def _phash_bits(small: np.ndarray) -> str:
    low = cv2.dct(small.astype(np.float32))[:8, :8].ravel()
    # The DC term is the mean brightness: leave it out of the median so it cannot skew the split.
    return _bits_to_hex(low > np.median(low[1:]))


def thumbnails(grey: np.ndarray, sizes: list[tuple[int, int]]) -> list[np.ndarray]:
    """uint8 thumbnails of `grey`, one per (width, height): cv2.resize's INTER_AREA (each pixel the
    mean of the area it covers, rounded), from one integral image. OpenCV's INTER_AREA at a
    fractional ratio costs ~3 ms a size on a 720p picture, and the hashes are taken of every
    screened image. The integral of a picture of constant pixels is bilinear inside each pixel, so
    interpolating the integral image at an area's fractional corners gives the exact sum. Single
    threaded on purpose: a BLAS matrix product did the same in less wall time but its threads spun
    after each call (+100 ms CPU a job on 2 cores). A picture smaller than a thumbnail (enlarged,
    where INTER_AREA interpolates) goes to cv2.resize."""
    h, w = grey.shape[:2]
    if any(w < tw or h < th for tw, th in sizes):
        return [cv2.resize(grey, size, interpolation=cv2.INTER_AREA) for size in sizes]
    table = cv2.integral(grey, sdepth=cv2.CV_64F)  # (h + 1, w + 1): sums of [0, y) x [0, x)
    out = []
    for tw, th in sizes:
        ys, xs = np.linspace(0, h, th + 1), np.linspace(0, w, tw + 1)
        corners = _bilinear(table, ys, xs)
        sums = corners[1:, 1:] - corners[:-1, 1:] - corners[1:, :-1] + corners[:-1, :-1]
        out.append(np.clip(np.rint(sums * (tw * th / (w * h))), 0, 255).astype(np.uint8))
    return out


def _bilinear(table: np.ndarray, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """`table` at every (y, x) of the grid ys × xs (fractional), interpolated bilinearly."""
    iy = np.minimum(ys.astype(np.int64), table.shape[0] - 2)
    ix = np.minimum(xs.astype(np.int64), table.shape[1] - 2)
    fy, fx = (ys - iy)[:, None], (xs - ix)[None, :]
    top = table[iy][:, ix] * (1 - fx) + table[iy][:, ix + 1] * fx
    bottom = table[iy + 1][:, ix] * (1 - fx) + table[iy + 1][:, ix + 1] * fx
    return top * (1 - fy) + bottom * fy


def hamming(a: str, b: str) -> int:
    return (int(a, 16) ^ int(b, 16)).bit_count()


def nearest(candidate: str, known: list[str]) -> tuple[int, int] | None:
    """(index, distance) of the closest known hash, or None for an empty list. Vectorised: the list
    is every known-bad hash, compared in memory because SQL has no portable popcount."""
    return nearest_each([candidate], known)[0]


def nearest_each(candidates: list[str], known: list[str]) -> list[tuple[int, int] | None]:
    """`nearest` for each candidate, the known hashes parsed once."""
    if not known:
        return [None] * len(candidates)
    table = np.array([int(h, 16) for h in known], dtype=np.uint64)
    found = []
    for candidate in candidates:
        xor = np.bitwise_xor(table, np.uint64(int(candidate, 16)))
        distances = np.unpackbits(xor.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
        index = int(np.argmin(distances))
        found.append((index, int(distances[index])))
    return found
