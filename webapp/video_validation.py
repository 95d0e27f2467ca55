"""Video upload validation (issue #6): container metadata only, plus one decoded frame.

Limits (bytes, duration, frame count, pixels) come from settings; each violation is an
UploadRejected with a stable code, shown as a 400 problem+json. Width and height are the
display size (after the rotation a phone records), which is what users see and billing prices.
"""

from __future__ import annotations

import hashlib
import io

from django.conf import settings

from swap.video import io as video_io

from .choices import MediaKind
from .validation import MediaInfo, UploadRejected


def inspect_video(data: bytes, *, field: str, media_type: str) -> MediaInfo:
    if len(data) > settings.VIDEO_MAX_BYTES:
        raise UploadRejected(
            "file_too_large",
            f"The {field} video is {len(data)} bytes; the limit is {settings.VIDEO_MAX_BYTES} bytes.",
            field=field,
        )
    try:
        info = video_io.probe(io.BytesIO(data))
    except video_io.NoVideoStream as exc:
        raise UploadRejected(
            "unsupported_media_type",
            f"The {field} file has no video stream (audio only?): send an MP4, MOV or WebM video.",
            field=field,
        ) from exc
    except video_io.InvalidVideo as exc:
        raise UploadRejected(
            "corrupt_video", f"The {field} video could not be read; it may be truncated or damaged. {exc}",
            field=field,
        ) from exc
    if info.video_codec not in video_io.VIDEO_CODECS:
        raise UploadRejected(
            "unsupported_media_type",
            f"The {field} video uses the {info.video_codec} codec; send H.264, H.265, VP8, VP9 or AV1.",
            field=field,
        )
    if info.duration_seconds > settings.VIDEO_MAX_DURATION_S:
        raise UploadRejected(
            "video_too_long",
            f"The {field} video is {info.duration_seconds:.1f} s long; the limit is "
            f"{settings.VIDEO_MAX_DURATION_S:g} s.",
            field=field,
        )
    if info.frames > settings.VIDEO_MAX_FRAMES:
        raise UploadRejected(
            "too_many_frames",
            f"The {field} video has {info.frames} frames; the limit is {settings.VIDEO_MAX_FRAMES}.",
            field=field,
        )
    if info.width * info.height > settings.MAX_IMAGE_PIXELS:
        raise UploadRejected(
            "video_too_large",
            f"The {field} video is {info.width}×{info.height} pixels; the limit is "
            f"{settings.MAX_IMAGE_PIXELS} pixels a frame.",
            field=field,
        )
    if min(info.width, info.height) < settings.MIN_IMAGE_SIDE:
        raise UploadRejected(
            "video_too_small",
            f"The {field} video is {info.width}×{info.height}; both sides must be at least "
            f"{settings.MIN_IMAGE_SIDE} pixels.",
            field=field,
        )
    return MediaInfo(
        data, hashlib.sha256(data).hexdigest(), media_type, MediaKind.VIDEO, info.width, info.height,
        frames=info.frames, fps=float(info.fps), duration_seconds=round(info.duration_seconds, 3),
        has_audio=info.has_audio,
    )
