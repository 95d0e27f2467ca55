"""Upload validation before anything is stored: type sniffed from content, size and pixel limits.

Each failure raises UploadRejected with a stable problem code and a message naming the field.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass

from django.conf import settings
from PIL import Image, UnidentifiedImageError

from .choices import MediaKind

IMAGE_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}


class UploadRejected(Exception):
    def __init__(self, code: str, message: str, *, field: str):
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


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

    @property
    def size_bytes(self) -> int:
        return len(self.data)


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
        return "video/quicktime" if brand == b"qt  " else "video/mp4"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "video/webm"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return None


def _too_large(field: str, size_bytes: int, limit_bytes: int) -> UploadRejected:
    return UploadRejected(
        "file_too_large", f"The {field} file is {size_bytes} bytes; the limit is {limit_bytes} bytes.", field=field
    )


def read_upload(uploaded_file, *, field: str, limit_bytes: int | None = None) -> bytes:
    limit_bytes = limit_bytes or settings.MAX_UPLOAD_BYTES
    if uploaded_file is None:
        raise UploadRejected("missing_file", f"The {field} file is required.", field=field)
    if uploaded_file.size > limit_bytes:
        raise _too_large(field, uploaded_file.size, limit_bytes)
    data = uploaded_file.read()
    if not data:
        raise UploadRejected("empty_file", f"The {field} file is empty.", field=field)
    return data


def inspect_image(data: bytes, *, field: str, media_type: str) -> MediaInfo:
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size  # header only: nothing decoded yet
            if width * height > settings.MAX_IMAGE_PIXELS:
                raise UploadRejected(
                    "image_too_large",
                    f"The {field} image is {width}×{height} pixels; the limit is {settings.MAX_IMAGE_PIXELS} pixels.",
                    field=field,
                )
            if min(width, height) < settings.MIN_IMAGE_SIDE:
                raise UploadRejected(
                    "image_too_small",
                    f"The {field} image is {width}×{height}; both sides must be at least {settings.MIN_IMAGE_SIDE} pixels.",
                    field=field,
                )
            image.load()  # bounded by the pixel check above; catches truncated files
    except UploadRejected:
        raise
    except Image.DecompressionBombError as exc:
        # Pillow refuses absurd headers itself, before we see the size.
        raise UploadRejected(
            "image_too_large",
            f"The {field} image has far more pixels than the limit of {settings.MAX_IMAGE_PIXELS} ({exc}).",
            field=field,
        ) from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise UploadRejected(
            "corrupt_image", f"The {field} file could not be decoded as an image ({exc}).", field=field
        ) from exc
    return MediaInfo(data, hashlib.sha256(data).hexdigest(), media_type, MediaKind.IMAGE, width, height)


def inspect_upload(uploaded_file, *, field: str, allow_video: bool) -> MediaInfo:
    # Videos may be larger than photos: read up to the larger limit, then apply the photo one.
    limit_bytes = max(settings.MAX_UPLOAD_BYTES, settings.VIDEO_MAX_BYTES) if allow_video else settings.MAX_UPLOAD_BYTES
    data = read_upload(uploaded_file, field=field, limit_bytes=limit_bytes)
    media_type = sniff_media_type(data[:32])
    if media_type in IMAGE_TYPES.values():
        if len(data) > settings.MAX_UPLOAD_BYTES:
            raise _too_large(field, len(data), settings.MAX_UPLOAD_BYTES)
        return inspect_image(data, field=field, media_type=media_type)
    if media_type and media_type.startswith("video/"):
        if not allow_video:
            raise UploadRejected(
                "unsupported_media_type",
                f"The {field} must be a photo (JPEG, PNG or WebP); videos are not supported here.",
                field=field,
            )
        from .video_validation import inspect_video  # noqa: PLC0415 - video support is optional

        return inspect_video(data, field=field, media_type=media_type)
    raise UploadRejected(
        "unsupported_media_type",
        f"The {field} file is not a supported type: send a JPEG, PNG or WebP photo.",
        field=field,
    )
