"""Upload type sniffing: ISO-BMFF files are videos only for MP4/QuickTime brands; HEIC/AVIF photos
get a clear 415 naming what is accepted (they used to fail as "no video stream")."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

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


@pytest.mark.django_db
@pytest.mark.parametrize(("brand", "kind"), [(b"heic", "HEIC"), (b"avif", "AVIF")])
def test_a_heic_or_avif_photo_gets_a_clear_415(api_a, astronaut_pair, brand, kind):
    source, _, _ = astronaut_pair
    response = api_a.post(
        "/api/v1/jobs",
        {"source": SimpleUploadedFile("s.png", source), "target": SimpleUploadedFile("t.heic", ftyp(brand, b"mif1")),
         "consent": "true"},
        format="multipart",
    )
    assert response.status_code == 415, response.content
    body = response.json()
    assert response["Content-Type"].startswith("application/problem+json")
    assert body["code"] == "unsupported_media_type"
    assert kind in body["detail"] and "JPEG, PNG or WebP" in body["detail"]
    assert body["errors"]["target"] == [body["detail"]]
