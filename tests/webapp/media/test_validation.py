"""Upload type sniffing: ISO-BMFF files are videos only for MP4/QuickTime brands; HEIC/AVIF photos
are photos (they used to fail as "no video stream"; test_phone_photos swaps them)."""

from __future__ import annotations

import pytest

from webapp.media.validation import sniff_media_type


def ftyp(brand: bytes, *compatible: bytes) -> bytes:
    body = brand + b"\x00\x00\x00\x00" + b"".join(compatible)
    return (8 + len(body)).to_bytes(4, "big") + b"ftyp" + body + b"\x00" * 64


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (ftyp(b"isom", b"iso2", b"avc1", b"mp41"), "video/mp4"),
        (ftyp(b"mp42", b"isom"), "video/mp4"),
        (ftyp(b"qt  "), "video/quicktime"),
        (ftyp(b"heic", b"mif1", b"heic"), "image/heic"),
        (ftyp(b"mif1", b"heic"), "image/heic"),
        (ftyp(b"avif", b"mif1", b"miaf"), "image/avif"),
        (ftyp(b"zzzz"), None),
    ],
)
def test_iso_bmff_brands(head, expected):
    assert sniff_media_type(head[:32]) == expected


