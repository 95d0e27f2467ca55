"""Decode untrusted image bytes into BGR uint8 frames, and encode results.

Pillow reads the header first, so the pixel limit is enforced before any pixel is
decoded (decompression bombs are refused cheaply); truncated files are refused rather than
silently grey-filled.
"""

from __future__ import annotations

import io
import warnings

import cv2
import numpy as np
from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

from swap.errors import InvalidImage

MIN_SIDE_PX = 64
DEFAULT_MAX_PIXELS = 40_000_000

# A truncated upload must fail loudly, not decode with a grey bottom half.
ImageFile.LOAD_TRUNCATED_IMAGES = False


def decode_image(
    data: bytes, *, which: str = "input", max_pixels: int = DEFAULT_MAX_PIXELS, max_side: int | None = None
) -> np.ndarray:
    """Return the image as BGR uint8 (H, W, 3), EXIF orientation applied.

    `max_side`: return at most about this many pixels on the longer side, cheaply: a JPEG is decoded
    at 1/2, 1/4 or 1/8 scale by libjpeg itself (never below max_side), other formats are box-reduced
    by a whole factor right after decoding, before any conversion to 8-bit BGR.
    Raises InvalidImage (with `which` = "source", "target", ...) for anything unusable.
    """
    if not data:
        raise InvalidImage(f"The {which} image is empty.", which=which)
    try:
        with warnings.catch_warnings():
            # Pillow warns (then errors) on huge images; we apply our own, lower limit below.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError) as exc:
        if isinstance(exc, Image.DecompressionBombError):
            raise InvalidImage(
                f"The {which} image is too large (over the limit of {max_pixels:,} pixels).", which=which
            ) from exc
        raise InvalidImage(
            f"The {which} file is not an image we can read (JPEG, PNG or WebP).", which=which
        ) from exc

    width, height = image.size
    if width * height > max_pixels:
        raise InvalidImage(
            f"The {which} image is too large: {width}x{height} pixels (limit {max_pixels:,} pixels).",
            which=which,
        )
    if min(width, height) < MIN_SIDE_PX:
        raise InvalidImage(
            f"The {which} image is too small: {width}x{height} pixels (at least {MIN_SIDE_PX}x{MIN_SIDE_PX}).",
            which=which,
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            if max_side and image.format == "JPEG":
                image.draft("RGB", (max_side, max_side))
            image.load()
            if max_side and max(image.size) > max_side:
                if image.mode.startswith("I;16"):
                    image = image.convert("I")  # Pillow reduces 32-bit integers, not 16-bit
                image = image.reduce(-(-max(image.size) // max_side))
            image = ImageOps.exif_transpose(image)
    except (OSError, ValueError, SyntaxError) as exc:
        raise InvalidImage(f"The {which} image is damaged or truncated.", which=which) from exc
    return _to_bgr_uint8(image)


def _to_bgr_uint8(image: Image.Image) -> np.ndarray:
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        # 16/32-bit grey: scale the real range down to 8 bits instead of clipping.
        arr = np.asarray(image, dtype=np.float64)
        top = 65535.0 if arr.max() > 255 else 255.0
        grey = np.clip(arr * (255.0 / top), 0, 255).astype(np.uint8)
        return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)
    if mode == "F":
        arr = np.asarray(image, dtype=np.float64)
        grey = np.clip(arr * (255.0 if arr.max() <= 1.0 else 1.0), 0, 255).astype(np.uint8)
        return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)
    if mode in ("RGBA", "LA", "PA") or (mode == "P" and "transparency" in image.info):
        # Composite transparency on white: what a viewer shows, and no black halo around the face.
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(background, rgba)
    rgb = np.asarray(image.convert("RGB"), dtype=np.uint8)
    return np.ascontiguousarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))


def encode_image(image: np.ndarray, fmt: str = "png", quality: int = 92) -> bytes:
    """Encode a BGR uint8 frame as png, jpeg or webp bytes."""
    fmt = fmt.lower()
    if fmt in ("jpeg", "jpg"):
        ext, params = ".jpg", [cv2.IMWRITE_JPEG_QUALITY, int(quality)]
    elif fmt == "webp":
        ext, params = ".webp", [cv2.IMWRITE_WEBP_QUALITY, int(quality)]
    elif fmt == "png":
        ext, params = ".png", [cv2.IMWRITE_PNG_COMPRESSION, 3]
    else:
        raise ValueError(f"unsupported image format {fmt!r} (png, jpeg or webp)")
    ok, buf = cv2.imencode(ext, image, params)
    if not ok:
        raise ValueError(f"could not encode the image as {fmt}")
    return buf.tobytes()
