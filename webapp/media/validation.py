"""Upload validation before anything is stored: type sniffed from content, size and pixel limits.

Photos: the header gives the size before anything is decoded, then one bounded decode catches
truncated files. Videos: container metadata only (PyAV), plus one decoded frame; width and height
are the display size (after the rotation a phone records), which is what users see and billing
prices. Each failure raises UploadRejected with a stable problem code and a message naming the field.
"""

from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO, NoReturn

import PIL
from django.conf import settings
from django.core.cache import cache
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext
from PIL import Image, UnidentifiedImageError

from swap.image_io import jpeg_frame, limit_text, megapixels, pixel_limit
from swap.video import io as video_io

from .choices import MediaKind

# Pillow's format name → media type; HEIC (iPhones) through pillow-heif (registered by swap.image_io).
IMAGE_TYPES = {
    "JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "HEIF": "image/heic", "AVIF": "image/avif",
}
# The photo formats in words, in the request's language (swap.image_io.ACCEPTED_FORMATS is the engine's English).
ACCEPTED_PHOTOS = gettext_lazy("JPEG, PNG, WebP, HEIC or AVIF")
# Every media type sniff_media_type names: what an accepted upload can be.
MEDIA_TYPES = frozenset({*IMAGE_TYPES.values(), "video/mp4", "video/quicktime", "video/webm"})
# ISO-BMFF major brands of MP4 and QuickTime video. The same box layout also carries HEIC/AVIF
# photos (brands heic, mif1, avif, …), which must not be mistaken for a video.
MP4_BRANDS = frozenset(
    b.encode()
    for b in (
        "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "M4V ", "M4VP",
        "dash", "mmp4", "MSNV", "f4v ", "3gp4", "3gp5", "3gp6", "3g2a", "XAVC",
    )
)
HEIF_BRANDS = frozenset(b.encode() for b in ("heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1", "avif", "avis"))


class UploadRejected(Exception):
    def __init__(self, code: str, message: str, *, field: str, status: int = 400):
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.status = status


@dataclass(frozen=True)
class MediaInfo:
    data: bytes
    sha256: str
    media_type: str
    kind: str
    width: int
    height: int
    frames: int = 1
    fps: float | None = None
    duration_seconds: float | None = None
    has_audio: bool = False
    name: str = ""  # the file's name on the uploader's device (for the gallery's search), if sent
    # A direct upload already in the uploads bucket: its key and size (`data` is then empty).
    stored_key: str = ""
    stored_size_bytes: int | None = None

    @property
    def size_bytes(self) -> int:
        return len(self.data) if self.stored_size_bytes is None else self.stored_size_bytes


def sniff_media_type(head: bytes) -> str | None:
    """The media type from the first bytes of a file (magic numbers), or None."""
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand == b"qt  ":
            return "video/quicktime"
        if brand in MP4_BRANDS:
            return "video/mp4"
        if brand in HEIF_BRANDS:
            return "image/avif" if brand.startswith(b"avi") else "image/heic"
        return None
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "video/webm"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return None


def field_word(field: str) -> str:
    """A request field in the words of a message ("the source file"): its name in English, a noun in
    other languages; a numbered photo ("source-2") or an unknown field keeps its name."""
    words = {"source": pgettext("upload field", "source"), "target": pgettext("upload field", "target")}
    return words.get(field, field)


def _too_large(field: str, size_bytes: int, limit_bytes: int) -> UploadRejected:
    return UploadRejected(
        "file_too_large",
        _("The %(field)s file is %(size)s; the limit is %(limit)s.")
        % {"field": field_word(field), "size": filesizeformat(size_bytes), "limit": filesizeformat(limit_bytes)},
        field=field,
    )


def read_upload(uploaded_file, *, field: str, limit_bytes: int | None = None) -> bytes:
    limit_bytes = limit_bytes or settings.MAX_UPLOAD_BYTES
    if uploaded_file is None:
        raise UploadRejected("missing_file", _("The %(field)s file is required.") % {"field": field_word(field)}, field=field)
    if uploaded_file.size > limit_bytes:
        raise _too_large(field, uploaded_file.size, limit_bytes)
    data = uploaded_file.read()
    if not data:
        raise UploadRejected("empty_file", _("The %(field)s file is empty.") % {"field": field_word(field)}, field=field)
    return data


# A photo decoded whole once is known by its SHA-256 for a week (as its NSFW detections are): the
# selfie a user uploads again for the next job is not decoded again. The same bytes decode the same
# way under the same Pillow (in the key). The cache failing open (Redis down) decodes it.
WHOLE_MEMO_TTL_S = 7 * 24 * 3600


def _whole_memo_key(sha256: str) -> str:
    return f"visage:decoded-whole:pillow-{PIL.__version__}:{sha256}"


def inspect_image(data: bytes, *, field: str, media_type: str) -> MediaInfo:
    sha256 = hashlib.sha256(data).hexdigest()
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size  # header only: nothing decoded yet
            if width * height > pixel_limit(image, data, settings.MAX_IMAGE_PIXELS):
                raise UploadRejected(
                    "image_too_large",
                    _("The %(field)s photo is %(width)d×%(height)d (%(megapixels)s); the limit is %(limit)s.")
                    % {"field": field_word(field), "width": width, "height": height, "megapixels": megapixels(width * height),
                       "limit": limit_text(settings.MAX_IMAGE_PIXELS)},
                    field=field,
                )
            if min(width, height) < settings.MIN_IMAGE_SIDE:
                raise UploadRejected(
                    "image_too_small",
                    _("The %(field)s image is %(width)d×%(height)d; both sides must be at least %(min)d pixels.")
                    % {"field": field_word(field), "width": width, "height": height, "min": settings.MIN_IMAGE_SIDE},
                    field=field,
                )
            if image.format in ("JPEG", "MPO") and len(data) < jpeg_minimum_bytes(data, width, height):
                # libjpeg pads missing rows without an error: a header claiming far more pixels
                # than the data holds would pass load() and cost every later step a full decode.
                raise UploadRejected(
                    "corrupt_image",
                    _(
                        "The %(field)s file says it is %(width)d×%(height)d pixels but holds far too little "
                        "image data for that: it is damaged or not a real photo."
                    ) % {"field": field_word(field), "width": width, "height": height},
                    field=field,
                )
            if not cache.get(_whole_memo_key(sha256)):
                _check_whole(image)
                cache.set(_whole_memo_key(sha256), 1, timeout=WHOLE_MEMO_TTL_S)
    except UploadRejected:
        raise
    except Image.DecompressionBombError as exc:
        # Pillow refuses absurd headers itself, before we see the size.
        raise UploadRejected(
            "image_too_large",
            _("The %(field)s photo has far more pixels%(claimed)s than the limit of %(limit)s.")
            % {"field": field_word(field), "claimed": _claimed_megapixels(exc), "limit": limit_text(settings.MAX_IMAGE_PIXELS)},
            field=field,
        ) from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError, RuntimeError) as exc:  # the last two: pillow-heif
        raise UploadRejected(
            "corrupt_image", _("The %(field)s file could not be decoded as an image (%(error)s).") % {"field": field_word(field), "error": exc},
            field=field
        ) from exc
    return MediaInfo(data, sha256, media_type, MediaKind.IMAGE, width, height)


def _check_whole(image: Image.Image) -> None:
    """Catch a truncated or damaged file now, with a clear 400: the file is decoded, a JPEG at 1/8
    scale (libjpeg still reads all of its data, so a cut or broken file fails: 1.4 vs 2.2 ms at
    720p), any other format in full (a PNG's checksums can hold over a broken compressed stream)."""
    if image.format == "JPEG":
        image.draft(None, (1, 1))  # the least size libjpeg offers: 1/8 of each side
    image.load()


def _claimed_megapixels(exc: Image.DecompressionBombError) -> str:
    """" (900 MP)" from Pillow's "Image size (900000000 pixels) exceeds …", or "" when it says otherwise."""
    found = re.search(r"\((\d+) pixels\)", str(exc))
    return f" ({megapixels(int(found.group(1)))})" if found else ""


# Huffman-coded sequential JPEG (baseline, extended, lossless): every 8×8 block costs at least two
# bits (a DC code and an end-of-block code, each ≥ 1 bit), and the components together have at
# least half as many blocks as one full-resolution component (sampling factors ≤ 4): so at least
# one bit per 8×8 block of the full image.
_SEQUENTIAL_HUFFMAN_SOF = frozenset({0xC0, 0xC1, 0xC3})


def jpeg_minimum_bytes(data: bytes, width: int, height: int) -> int:
    """The fewest bytes a sequential Huffman JPEG of width×height can have (0 when the frame is
    progressive or arithmetic-coded, where runs of empty blocks can cost almost nothing)."""
    frame = jpeg_frame(data)
    if frame is None or frame.marker not in _SEQUENTIAL_HUFFMAN_SOF:
        return 0
    blocks = -(-width // 8) * -(-height // 8)
    return blocks // 8


def inspect_upload(uploaded_file, *, field: str, allow_video: bool) -> MediaInfo:
    # Videos may be larger than photos: read up to the larger limit, then apply the photo one.
    limit_bytes = max(settings.MAX_UPLOAD_BYTES, settings.VIDEO_MAX_BYTES) if allow_video else settings.MAX_UPLOAD_BYTES
    data = read_upload(uploaded_file, field=field, limit_bytes=limit_bytes)
    media_type = sniff_media_type(data[:32])
    if media_type in IMAGE_TYPES.values():
        if len(data) > settings.MAX_UPLOAD_BYTES:
            raise _too_large(field, len(data), settings.MAX_UPLOAD_BYTES)
        return replace(inspect_image(data, field=field, media_type=media_type), name=original_name(uploaded_file))
    if media_type and media_type.startswith("video/") and allow_video:
        return replace(inspect_video(data, field=field, media_type=media_type), name=original_name(uploaded_file))
    _refuse_unsupported(media_type, field=field, allow_video=allow_video)


def original_name(uploaded_file) -> str:
    """The name the browser or app sent with the file: its last path part, printable, at most 255 characters."""
    name = str(getattr(uploaded_file, "name", "") or "").replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(ch for ch in name if ch.isprintable()).strip()[:255]


def check_photo_type(data: bytes, *, field: str) -> str:
    """The photo's media type sniffed from its bytes, refused as inspect_upload refuses what jobs can't use."""
    media_type = sniff_media_type(data[:32])
    if media_type in IMAGE_TYPES.values():
        return media_type
    _refuse_unsupported(media_type, field=field, allow_video=False)


def _refuse_unsupported(media_type: str | None, *, field: str, allow_video: bool) -> NoReturn:
    if media_type and media_type.startswith("video/"):
        raise _unsupported(
            field, _("The %(field)s must be a photo (%(types)s); videos are not supported here.")
            % {"field": field_word(field), "types": ACCEPTED_PHOTOS},
        )
    if allow_video:
        message = _("The %(field)s file is not a supported type: please use a %(types)s photo, or an MP4, MOV or WebM video.")
    else:
        message = _("The %(field)s file is not a supported type: please use a %(types)s photo.")
    raise _unsupported(field, message % {"field": field_word(field), "types": ACCEPTED_PHOTOS})


def _unsupported(field: str, message: str, *, status: int = 400) -> UploadRejected:
    return UploadRejected("unsupported_media_type", message, field=field, status=status)


def inspect_stored_file(path: Path, *, sha256: str, field: str, allow_video: bool, name: str = "") -> MediaInfo:
    """inspect_upload for a file already on disk (a direct upload streamed from S3): the same
    limits, sniffing and probes. A video is probed from the file (never read into memory; the
    MediaInfo then has no `data`); a photo, bounded by the photo limit, is read to decode it."""
    size_bytes = path.stat().st_size
    limit_bytes = max(settings.MAX_UPLOAD_BYTES, settings.VIDEO_MAX_BYTES) if allow_video else settings.MAX_UPLOAD_BYTES
    if size_bytes == 0:
        raise UploadRejected("empty_file", _("The %(field)s file is empty.") % {"field": field_word(field)}, field=field)
    if size_bytes > limit_bytes:
        raise _too_large(field, size_bytes, limit_bytes)
    with path.open("rb") as file:
        media_type = sniff_media_type(file.read(32))
    if media_type in IMAGE_TYPES.values():
        if size_bytes > settings.MAX_UPLOAD_BYTES:
            raise _too_large(field, size_bytes, settings.MAX_UPLOAD_BYTES)
        return replace(inspect_image(path.read_bytes(), field=field, media_type=media_type), name=name)
    if media_type and media_type.startswith("video/") and allow_video:
        with path.open("rb") as file:
            return _inspect_video_source(
                file, size_bytes=size_bytes, sha256=sha256, data=b"", field=field, media_type=media_type, name=name
            )
    _refuse_unsupported(media_type, field=field, allow_video=allow_video)


def inspect_video(data: bytes, *, field: str, media_type: str) -> MediaInfo:
    return _inspect_video_source(
        io.BytesIO(data), size_bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), data=data,
        field=field, media_type=media_type,
    )


def _inspect_video_source(
    source: BinaryIO, *, size_bytes: int, sha256: str, data: bytes, field: str, media_type: str, name: str = ""
) -> MediaInfo:
    if size_bytes > settings.VIDEO_MAX_BYTES:
        raise UploadRejected(
            "file_too_large",
            _("The %(field)s video is %(size)s; the limit is %(limit)s.")
            % {"field": field_word(field), "size": filesizeformat(size_bytes), "limit": filesizeformat(settings.VIDEO_MAX_BYTES)},
            field=field,
        )
    try:
        info = video_io.probe(source)
    except video_io.NoVideoStream as exc:
        raise UploadRejected(
            "unsupported_media_type",
            _("The %(field)s file has no video stream (audio only?): please use an MP4, MOV or WebM video.")
            % {"field": field_word(field)},
            field=field,
        ) from exc
    except video_io.InvalidVideo as exc:
        raise UploadRejected(
            "corrupt_video",
            _("The %(field)s video could not be read; it may be truncated or damaged. %(error)s")
            % {"field": field_word(field), "error": exc},
            field=field,
        ) from exc
    # video_codec is the format's name (av1, hevc), whichever decoder PyAV picked (libdav1d, …).
    if info.video_codec not in video_io.VIDEO_CODECS:
        raise UploadRejected(
            "unsupported_media_type",
            _(
                "The %(field)s video is encoded as %(codec)s, which we can't process: please use H.264, "
                "H.265 (HEVC), VP8, VP9 or AV1 (most editors export H.264 MP4)."
            ) % {"field": field_word(field), "codec": info.video_codec},
            field=field,
            status=415,  # a readable video in a codec we refuse
        )
    if info.duration_seconds > settings.VIDEO_MAX_DURATION_S:
        raise UploadRejected(
            "video_too_long",
            _("The %(field)s video is %(duration).1f s long; the limit is %(limit)g s.")
            % {"field": field_word(field), "duration": info.duration_seconds, "limit": settings.VIDEO_MAX_DURATION_S},
            field=field,
        )
    if info.frames > settings.VIDEO_MAX_FRAMES:
        raise UploadRejected(
            "too_many_frames",
            _("The %(field)s video has %(frames)d frames; the limit is %(limit)d.")
            % {"field": field_word(field), "frames": info.frames, "limit": settings.VIDEO_MAX_FRAMES},
            field=field,
        )
    if info.width * info.height > settings.MAX_IMAGE_PIXELS:
        raise UploadRejected(
            "video_too_large",
            _("The %(field)s video is %(width)d×%(height)d (%(megapixels)s a frame); the limit is %(limit)s a frame.")
            % {"field": field_word(field), "width": info.width, "height": info.height,
               "megapixels": megapixels(info.width * info.height), "limit": megapixels(settings.MAX_IMAGE_PIXELS)},
            field=field,
        )
    if min(info.width, info.height) < settings.MIN_IMAGE_SIDE:
        raise UploadRejected(
            "video_too_small",
            _("The %(field)s video is %(width)d×%(height)d; both sides must be at least %(min)d pixels.")
            % {"field": field_word(field), "width": info.width, "height": info.height, "min": settings.MIN_IMAGE_SIDE},
            field=field,
        )
    return MediaInfo(
        data, sha256, media_type, MediaKind.VIDEO, info.width, info.height,
        frames=info.frames, fps=float(info.fps), duration_seconds=round(info.duration_seconds, 3),
        has_audio=info.has_audio, name=name, stored_size_bytes=None if data else size_bytes,
    )
