"""Upload type sniffing: ISO-BMFF files are videos only for MP4/QuickTime brands; HEIC/AVIF photos
are photos (they used to fail as "no video stream"; test_phone_photos swaps them)."""

from __future__ import annotations

import hashlib

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




def test_a_photo_decoded_whole_once_is_not_decoded_again(astronaut_rgb, monkeypatch):
    """The selfie uploaded again for the next job: known by its bytes' SHA-256 (in Redis), not
    decoded whole again; other bytes are; with the cache down (failing open), every upload is."""
    from django.core.cache import cache

    from tests.helpers.images import encode
    from webapp.media import validation

    decoded = []
    real = validation._check_whole
    monkeypatch.setattr(validation, "_check_whole", lambda image: (decoded.append(image.format), real(image))[1])
    photo = encode(astronaut_rgb, "PNG")
    other = encode(astronaut_rgb[:, ::-1], "PNG")
    cache.delete_many([validation._whole_memo_key(hashlib.sha256(data).hexdigest()) for data in (photo, other)])

    for data in (photo, photo, other, photo):
        assert validation.inspect_image(data, field="source", media_type="image/png").width == 512
    assert decoded == ["PNG", "PNG"]

    monkeypatch.setattr(validation.cache, "get", lambda key: None)  # what the fail-open cache returns when down
    validation.inspect_image(photo, field="source", media_type="image/png")
    assert decoded == ["PNG", "PNG", "PNG"]
