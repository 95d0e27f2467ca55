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
    small = cv2.resize(_grey(image_bgr), (9, 8), interpolation=cv2.INTER_AREA).astype(np.int16)
    return _bits_to_hex(small[:, 1:] > small[:, :-1])


def phash(image_bgr: np.ndarray) -> str:
    """Perceptual hash: the 8×8 lowest DCT frequencies of a 32×32 thumbnail against their median."""
    small = cv2.resize(_grey(image_bgr), (32, 32), interpolation=cv2.INTER_AREA).astype(np.float32)
    low = cv2.dct(small)[:8, :8].ravel()
    # The DC term is the mean brightness: leave it out of the median so it cannot skew the split.
    return _bits_to_hex(low > np.median(low[1:]))


def phash_dhash(image_bgr: np.ndarray) -> tuple[str, str]:
    """Both perceptual hashes from one grey conversion of the full image (the same values)."""
    grey = _grey(image_bgr)
    return phash(grey), dhash(grey)


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
