"""Content fingerprints for the known-bad list: SHA-256 of the bytes and 64-bit perceptual hashes.

pHash (DCT of a 32×32 grey thumbnail) survives re-encoding, resizing and small edits, so a
re-upload of rejected content is caught without running any model; dHash is kept in the audit
record as a second opinion. Hashes are 16 hex characters (64 bits).
"""

from __future__ import annotations

import functools
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
    mean of the area it covers, rounded), computed as two products with area-weight matrices, all
    sizes in one pass over the image. OpenCV's INTER_AREA at a fractional ratio costs ~3 ms a size on
    a 720p picture (~1 ms both here), and the hashes are taken of every screened image. A picture
    smaller than a thumbnail (enlarged, where INTER_AREA interpolates) goes to cv2.resize."""
    h, w = grey.shape[:2]
    if any(w < tw or h < th for tw, th in sizes):
        return [cv2.resize(grey, size, interpolation=cv2.INTER_AREA) for size in sizes]
    columns = np.vstack([_area_weights(w, tw) for tw, _ in sizes])  # (sum of widths, w)
    narrowed = grey.astype(np.float32) @ columns.T  # (h, sum of widths)
    out, start = [], 0
    for tw, th in sizes:
        small = _area_weights(h, th) @ narrowed[:, start : start + tw]
        out.append(np.clip(np.rint(small), 0, 255).astype(np.uint8))
        start += tw
    return out


@functools.lru_cache(maxsize=64)
def _area_weights(length: int, size: int) -> np.ndarray:
    """(size, length) float32: row j averages the inputs that output j covers, each by how much of
    it lies inside [j, j + 1) × length / size."""
    edges = np.arange(size + 1) * (length / size)
    starts, ends = edges[:-1, None], edges[1:, None]
    pixels = np.arange(length)[None, :]
    covered = np.clip(np.minimum(ends, pixels + 1) - np.maximum(starts, pixels), 0, None)
    weights = (covered / (ends - starts)).astype(np.float32)
    weights.flags.writeable = False
    return weights


def hamming(a: str, b: str) -> int:
    return (int(a, 16) ^ int(b, 16)).bit_count()


def nearest(candidate: str, known: list[str]) -> tuple[int, int] | None:
    """(index, distance) of the closest known hash, or None for an empty list. Vectorised: the list
    is every known-bad hash, compared in memory because SQL has no portable popcount."""
    if not known:
        return None
    table = np.array([int(h, 16) for h in known], dtype=np.uint64)
    xor = np.bitwise_xor(table, np.uint64(int(candidate, 16)))
    distances = np.unpackbits(xor.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
    index = int(np.argmin(distances))
    return index, int(distances[index])
