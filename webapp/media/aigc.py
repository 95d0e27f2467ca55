"""AIGC labelling: every result carries a machine-readable "AI-generated" mark in its metadata.

Images: EXIF ImageDescription/Software (JPEG, WebP) or PNG text chunks, plus an XMP packet with
the IPTC digital-source-type "trainedAlgorithmicMedia" that platforms read. Videos: the MP4's
`comment` and `description` tags (written by the muxer from `video_metadata`).

Beyond this metadata label, results carry a visible mark (`visible_mark`, burnt into the pixels by
swap.mark) and C2PA Content Credentials (webapp.media.provenance).
"""

from __future__ import annotations

import io
import uuid

import av
import numpy as np
from django.conf import settings
from PIL import Image, PngImagePlugin

from swap.mark import MarkStyle, VisibleMark

LABEL = "AI-generated: face swapped by Visage"
IPTC_SOURCE_TYPE = "http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia"
XMP_TEMPLATE = (
    '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>'
    '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
    '<rdf:Description rdf:about="" xmlns:Iptc4xmpExt="http://iptc.org/std/Iptc4xmpExt/2008-02-29/" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" Iptc4xmpExt:DigitalSourceType="{source_type}">'
    '<dc:description><rdf:Alt><rdf:li xml:lang="x-default">{label} (job {job_id})</rdf:li></rdf:Alt></dc:description>'
    "</rdf:Description></rdf:RDF></x:xmpmeta>"
    '<?xpacket end="w"?>'
)


def encode_labelled(image_bgr: np.ndarray, *, fmt: str, job_id: uuid.UUID, quality: int = 95) -> bytes:
    """Encode a BGR frame as jpeg, png or webp with the AI-generated label in its metadata."""
    image = Image.fromarray(np.ascontiguousarray(image_bgr[:, :, ::-1]))
    xmp = XMP_TEMPLATE.format(source_type=IPTC_SOURCE_TYPE, label=LABEL, job_id=job_id).encode()
    exif = Image.Exif()
    exif[0x010E] = f"{LABEL} (job {job_id})"  # ImageDescription
    exif[0x0131] = "Visage"  # Software
    buffer = io.BytesIO()
    if fmt == "png":
        info = PngImagePlugin.PngInfo()
        info.add_text("AIGC", "true")
        info.add_text("Description", f"{LABEL} (job {job_id})")
        info.add_itxt("XML:com.adobe.xmp", xmp.decode())
        image.save(buffer, format="PNG", pnginfo=info, exif=exif, compress_level=3)
    elif fmt == "webp":
        image.save(buffer, format="WEBP", quality=quality, exif=exif, xmp=xmp)
    else:
        image.save(buffer, format="JPEG", quality=quality, exif=exif, xmp=xmp, subsampling=0)
    return buffer.getvalue()


def video_metadata(job_id: uuid.UUID) -> dict[str, str]:
    """Container tags for a video result."""
    return {"comment": f"{LABEL} (job {job_id})", "description": LABEL}


def is_labelled(data: bytes) -> bool:
    """Does this result (an image, or an MP4 video) carry the AI-generated label?"""
    if data[4:8] == b"ftyp":
        with av.open(io.BytesIO(data)) as container:
            return any(LABEL in str(value) for value in container.metadata.values())
    with Image.open(io.BytesIO(data)) as image:
        description = image.getexif().get(0x010E, "") or image.info.get("Description", "")
        return LABEL in str(description)


_marks: dict[MarkStyle, VisibleMark] = {}


def visible_mark() -> VisibleMark | None:
    """The configured visible mark (badges cached per frame size), or None when an operator turned it off."""
    if not settings.MARK_ENABLED:
        return None
    style = MarkStyle(
        text=settings.MARK_TEXT, position=settings.MARK_POSITION, height_fraction=settings.MARK_HEIGHT_FRACTION
    )
    mark = _marks.get(style)
    if mark is None:
        mark = _marks[style] = VisibleMark(style)
    return mark
