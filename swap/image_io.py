"""Decode untrusted image bytes into BGR uint8 frames, and encode results.

Pillow reads the header first, so the pixel limit is enforced before any pixel is
decoded (decompression bombs are refused cheaply); truncated files are refused rather than
silently grey-filled.

Phone photos: a 48–200 MP JPEG is decoded by libjpeg at 1/2, 1/4 or 1/8 scale (DCT scaling,
Pillow's `draft`), so it costs no more memory than one within the pixel budget; HEIC (iPhones) is
read through pillow-heif, AVIF by Pillow itself, both within the budget.
"""

from __future__ import annotations

import hashlib
import io
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import ExifTags, Image, ImageFile, ImageOps, UnidentifiedImageError
from pillow_heif import register_heif_opener

from swap.errors import InvalidImage

MIN_SIDE_PX = 64
DEFAULT_MAX_PIXELS = 40_000_000
# The largest JPEG decoded at a reduced size (a 200 MP phone sensor is 16320×12240).
MAX_REDUCIBLE_JPEG_PIXELS = 200_000_000
DCT_SCALES = (1, 2, 4, 8)  # libjpeg's whole reductions
ACCEPTED_FORMATS = "JPEG, PNG, WebP, HEIC or AVIF"

register_heif_opener()
# Pillow's own guard against decompression bombs (it refuses over twice this, from the header):
# well above the largest photo accepted here, so our limits speak first, in the user's terms.
Image.MAX_IMAGE_PIXELS = MAX_REDUCIBLE_JPEG_PIXELS * 2


def megapixels(pixels: int) -> str:
    """A pixel count as people say it: "48.8 MP"."""
    return f"{pixels / 1_000_000:.1f} MP".replace(".0 MP", " MP")


def pixel_limit(image: Image.Image, data: bytes, max_pixels: int) -> int:
    """How many pixels this photo (opened, not decoded) may have: a JPEG that decodes at a reduced
    size in bounded memory up to MAX_REDUCIBLE_JPEG_PIXELS; everything else within the decoding budget."""
    return max(max_pixels, MAX_REDUCIBLE_JPEG_PIXELS) if reducible_jpeg(image, data) else max_pixels


_STANDALONE_MARKERS = frozenset({0x01, *range(0xD0, 0xD8)})  # TEM, RSTn: no length field


@dataclass(frozen=True)
class JpegFrame:
    """A JPEG's frame header as its marker segments say (read without decoding)."""

    marker: int  # its start-of-frame marker: 0xC0 baseline, 0xC1 extended, 0xC2 progressive, ...
    components: int
    first_scan_components: int  # how many components the first scan holds (0: no scan header)


def jpeg_frame(data: bytes) -> JpegFrame | None:
    """The frame header of a JPEG's bytes, walking the marker segments from SOI (so a thumbnail
    inside APP1 is never mistaken for the frame); bytes between segments are skipped up to the
    next marker, as libjpeg does. None when there is no frame header."""
    position, frame = 2, None  # after SOI
    while position + 4 <= len(data):
        if data[position] != 0xFF:  # a stray byte: libjpeg skips to the next marker
            position += 1
            continue
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker in _STANDALONE_MARKERS:
            position += 2
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC) and frame is None:
            if position + 10 > len(data):
                return None
            frame = JpegFrame(marker, data[position + 9], 0)
        elif marker == 0xDA and frame is not None:  # the first scan
            scan = data[position + 4] if position + 4 < len(data) else 0
            return JpegFrame(frame.marker, frame.components, scan)
        position += 2 + int.from_bytes(data[position + 2 : position + 4], "big")
    return frame


def reducible_jpeg(image: Image.Image, data: bytes) -> bool:
    """Whether libjpeg decodes this JPEG at 1/2-1/8 scale in memory for the reduced picture only:
    a sequential Huffman frame (baseline, extended) whose first scan holds every component. A
    progressive, arithmetic-coded or multi-scan file is buffered whole as coefficients whatever
    scale is asked (a 237-byte progressive file saying 14000x14000 cost 1.1 GB) and is held to the
    plain pixel budget."""
    if image.format != "JPEG":
        return False
    frame = jpeg_frame(data)
    return frame is not None and frame.marker in (0xC0, 0xC1) and frame.first_scan_components == frame.components


def limit_text(max_pixels: int) -> str:
    """The pixel limits in words, for a refusal."""
    if max_pixels >= MAX_REDUCIBLE_JPEG_PIXELS:
        return megapixels(max_pixels)
    return (
        f"{megapixels(MAX_REDUCIBLE_JPEG_PIXELS)} for a JPEG, {megapixels(max_pixels)} for other formats "
        "and progressive JPEGs"
    )


def draft_within(
    image: Image.Image, max_pixels: int, max_side: int | None = None, cover: tuple[int, int] | None = None
) -> None:
    """Before load(): ask libjpeg for the least reduction (1/2, 1/4, 1/8) that fits `max_pixels`
    and, when given, keeps about `max_side` on the longer side, or the most that still covers
    `cover` (width, height, either way round). No-op for other formats."""
    scale = draft_scale(image, max_pixels, max_side, cover)
    if scale > 1:
        width, height = image.size
        image.draft("RGB", (-(-width // scale), -(-height // scale)))


def draft_scale(
    image: Image.Image, max_pixels: int, max_side: int | None = None, cover: tuple[int, int] | None = None
) -> int:
    """The reduction `draft_within` asks libjpeg for (1: none; always 1 for other formats)."""
    if image.format != "JPEG":
        return 1
    width, height = image.size
    scale = next(
        (k for k in DCT_SCALES if -(-width // k) * -(-height // k) <= max_pixels), DCT_SCALES[-1]
    )
    if max_side:
        scale = max(scale, max(k for k in DCT_SCALES if max(width, height) // k >= max_side or k == 1))
    if cover:
        short, long = sorted(cover)
        scale = max(scale, max(
            k for k in DCT_SCALES if (min(width, height) // k >= short and max(width, height) // k >= long) or k == 1
        ))
    return scale


def decodes_reduced(data: bytes, scaled_to: Callable[[int, int], tuple[int, int]], max_pixels: int) -> bool:
    """Whether `decode_image(data, scaled_to=scaled_to)` has libjpeg decode fewer pixels than the
    picture holds (from its header alone; False for anything unreadable, which decode_image refuses)."""
    try:
        image = Image.open(io.BytesIO(data))
        width, height = image.size
        wanted = scaled_to(*((height, width) if _turns_sideways(image) else (width, height)))
        return draft_scale(image, max_pixels, cover=wanted) > draft_scale(image, max_pixels)
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError, SyntaxError):
        return False  # a header Pillow cannot read: decode_image says what is wrong


# A truncated upload must fail loudly, not decode with a grey bottom half.
ImageFile.LOAD_TRUNCATED_IMAGES = False


def decode_image(
    data: bytes,
    *,
    which: str = "input",
    max_pixels: int = DEFAULT_MAX_PIXELS,
    max_side: int | None = None,
    scaled_to: Callable[[int, int], tuple[int, int]] | None = None,
) -> np.ndarray:
    """Return the image as BGR uint8 (H, W, 3), EXIF orientation applied.

    `max_side`: return at most about this many pixels on the longer side, cheaply: a JPEG is decoded
    at 1/2, 1/4 or 1/8 scale by libjpeg itself (never below max_side), other formats are box-reduced
    by a whole factor right after decoding, before any conversion to 8-bit BGR.
    `scaled_to(width, height)`: the size (never larger) the picture is wanted at, from its full
    upright size; it is returned at exactly that size, area-averaged (cv2.INTER_AREA), and a JPEG
    is first decoded by libjpeg at the most reduction (1/2, 1/4, 1/8) that still covers it. A 12 MP
    phone photo for 1080p: decoded at 2016x1512, not 4032x3024, then reduced to 1440x1080.
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
                f"The {which} image is too large (the limit is {limit_text(max_pixels)}).", which=which
            ) from exc
        raise InvalidImage(
            f"The {which} file is not an image we can read ({ACCEPTED_FORMATS}).", which=which
        ) from exc

    width, height = image.size
    if width * height > pixel_limit(image, data, max_pixels):
        raise InvalidImage(
            f"The {which} image is too large: {width}×{height} ({megapixels(width * height)}); "
            f"the limit is {limit_text(max_pixels)}.",
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
            wanted = None
            if scaled_to is not None:
                upright = (height, width) if _turns_sideways(image) else (width, height)
                wanted = scaled_to(*upright)
            draft_within(image, max_pixels, max_side, cover=wanted)
            image.load()
            if max_side and max(image.size) > max_side:
                if image.mode.startswith("I;16"):
                    image = image.convert("I")  # Pillow reduces 32-bit integers, not 16-bit
                image = image.reduce(-(-max(image.size) // max_side))
            # Only when the EXIF asks for a turn: exif_transpose copies the whole picture even when
            # it has nothing to do (most photos).
            turned = ImageOps.exif_transpose(image) if _needs_turning(image) else image
    except (OSError, ValueError, SyntaxError, EOFError, RuntimeError) as exc:  # EOFError, RuntimeError: pillow-heif
        raise InvalidImage(f"The {which} image is damaged or truncated.", which=which) from exc
    pixels = _to_bgr_uint8(turned)
    if wanted is not None:
        height, width = pixels.shape[:2]
        if width < wanted[0] or height < wanted[1]:  # a JPEG over max_pixels, decoded reduced: as it came
            wanted = scaled_to(width, height)
        if (width, height) != tuple(wanted):
            pixels = cv2.resize(pixels, tuple(wanted), interpolation=cv2.INTER_AREA)
    return pixels


class RecentPhotos:
    """The last photos decoded, known by their bytes' SHA-256: a user's selfie swapped into one
    target after another is decoded once per process, not once per job (a 512x512 PNG costs ~7 ms
    a decode here, in the screening worker and again in the GPU step). The arrays are read-only (a
    write into one would change every later job's source: it raises instead). Bounded by their
    total size; the photo used longest ago goes first; a photo larger than the whole allowance is
    never kept. In memory only, like the last few source photos the GPU step's swapper holds anyway
    (swap.swappers.classical.SOURCE_PHOTOS_HELD). Thread-safe."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._held: OrderedDict[tuple[str, int], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def held(self, sha256: str, *, max_pixels: int) -> np.ndarray | None:
        """The photo whose bytes have this SHA-256 hex digest, when it is held: a caller that knows
        the digest of a stored photo (the platform took it of the bytes it stored) reads nothing."""
        with self._lock:
            image = self._held.get((sha256, max_pixels))
            if image is not None:
                self._held.move_to_end((sha256, max_pixels))
            return image

    def decode(self, data: bytes, *, which: str, max_pixels: int, sha256: str | None = None) -> np.ndarray:
        """decode_image(data, which=, max_pixels=), remembered; `sha256`: the bytes' hex digest when
        the caller has it (else it is taken here: ~1 ms a 500 kB upload, a seventh of a decode)."""
        key = (sha256 or hashlib.sha256(data).hexdigest(), max_pixels)
        with self._lock:
            image = self._held.get(key)
            if image is not None:
                self._held.move_to_end(key)
                return image
        image = decode_image(data, which=which, max_pixels=max_pixels)
        image.flags.writeable = False
        if image.nbytes <= self.max_bytes:
            with self._lock:
                self._held[key] = image
                while sum(held.nbytes for held in self._held.values()) > self.max_bytes:
                    self._held.popitem(last=False)  # never the one just added: it fits alone
        return image


# Source photos (selfies) of the jobs a worker process ran lately: ~3 MB a 1-MP photo.
SOURCE_PHOTOS = RecentPhotos(max_bytes=64 * 1024 * 1024)


def _needs_turning(image: Image.Image) -> bool:
    """Whether the EXIF orientation asks for a turn or flip (1, or none, is upright)."""
    return image.getexif().get(ExifTags.Base.Orientation, 1) not in (0, 1)


def _turns_sideways(image: Image.Image) -> bool:
    """Whether the EXIF orientation swaps width and height (5-8: a quarter turn, with or without a flip)."""
    return image.getexif().get(ExifTags.Base.Orientation, 1) in (5, 6, 7, 8)


def _to_bgr_uint8(image: Image.Image) -> np.ndarray:
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        # 16/32-bit grey: scale the real range down to 8 bits instead of clipping. In place, in
        # float32: float64 temporaries made a 40 MP 16-bit PNG cost ~1 GB (2.6x an RGB one).
        arr = np.asarray(image, dtype=np.float32)
        arr *= 255.0 / (65535.0 if arr.max() > 255 else 255.0)
        return cv2.cvtColor(np.clip(arr, 0, 255, out=arr).astype(np.uint8), cv2.COLOR_GRAY2BGR)
    if mode == "F":
        arr = np.array(image, dtype=np.float32)
        arr *= 255.0 if arr.max() <= 1.0 else 1.0
        return cv2.cvtColor(np.clip(arr, 0, 255, out=arr).astype(np.uint8), cv2.COLOR_GRAY2BGR)
    if mode in ("RGBA", "LA", "PA") or (mode == "P" and "transparency" in image.info):
        # Composite transparency on white: what a viewer shows, and no black halo around the face.
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(background, rgba)
    rgb = np.asarray(image if mode == "RGB" else image.convert("RGB"), dtype=np.uint8)
    return np.ascontiguousarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))


def reduced(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """`image` made smaller to `size` (width, height) for analysis (a detector's or OCR's copy):
    exact halvings by area averaging, then bilinear for the last factor, under 2, where bilinear
    sampling skips no pixel. OpenCV's area averaging at an uneven ratio is 6-8x slower (a
    2333-px photo to 1,024 px: 16 -> 2.5 ms; 12 MP: 43 -> 6 ms, one thread) for the same picture
    to within ~1 grey level. Halving drops an odd last row or column (less than a pixel of the
    result). Results a person sees keep cv2.INTER_AREA."""
    width, height = size
    while image.shape[1] >= 2 * width and image.shape[0] >= 2 * height:
        h, w = image.shape[:2]
        image = cv2.resize(image[: h - h % 2, : w - w % 2], (w // 2, h // 2), interpolation=cv2.INTER_AREA)
    if image.shape[1] == width and image.shape[0] == height:
        return image
    return cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR)


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
