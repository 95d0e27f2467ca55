"""Decoding untrusted uploads into frames."""

from __future__ import annotations

import hashlib
import io
import struct
import zlib

import cv2
import numpy as np
import pytest
from PIL import Image, JpegImagePlugin
from skimage import data

from swap.errors import InvalidImage
from swap.image_io import decode_image, decodes_reduced, encode_image, reduced


def _png_header_only(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims width x height (a decompression bomb's calling card)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\0" * 16))
        + chunk(b"IEND", b"")
    )


def _pil_bytes(image: Image.Image, fmt: str, **kwargs) -> bytes:
    buf = io.BytesIO()
    image.save(buf, fmt, **kwargs)
    return buf.getvalue()


def test_round_trip_keeps_size_and_colour(astronaut):
    for fmt in ("png", "jpeg", "webp"):
        decoded = decode_image(encode_image(astronaut, fmt, quality=95), which="source")
        assert decoded.shape == astronaut.shape and decoded.dtype == np.uint8
        assert np.abs(decoded.astype(int) - astronaut).mean() < 3  # BGR order preserved


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"", "empty"),
        (b"definitely not an image" * 10, "not an image"),
        (_png_header_only(30_000, 30_000), "too large"),
    ],
)
def test_refuses_unusable_bytes_with_a_message_naming_the_input(data, needle):
    with pytest.raises(InvalidImage) as info:
        decode_image(data, which="target", max_pixels=40_000_000)
    assert needle in str(info.value) and "target" in str(info.value)
    assert info.value.which == "target" and "\n" not in str(info.value)


def test_pixel_limit_is_checked_before_decoding():
    # 9000x9000 is below Pillow's own bomb limit, so only our header check can refuse it.
    with pytest.raises(InvalidImage, match="too large: 9000×9000"):
        decode_image(_png_header_only(9000, 9000), which="source", max_pixels=20_000_000)


def test_refuses_truncated_jpeg(astronaut):
    jpeg = encode_image(astronaut, "jpeg")
    with pytest.raises(InvalidImage, match="damaged or truncated"):
        decode_image(jpeg[: len(jpeg) // 2], which="source")


def test_refuses_tiny_images():
    one_pixel = encode_image(np.zeros((1, 1, 3), np.uint8), "png")
    with pytest.raises(InvalidImage, match="too small: 1x1"):
        decode_image(one_pixel, which="source")


def test_applies_exif_orientation():
    image = Image.new("RGB", (120, 80), (255, 0, 0))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise for display
    decoded = decode_image(_pil_bytes(image, "JPEG", exif=exif), which="source")
    assert decoded.shape == (120, 80, 3)


def test_converts_grey_16bit_and_transparent_images_to_bgr():
    grey16 = Image.fromarray((np.linspace(0, 65535, 100 * 100).reshape(100, 100)).astype(np.uint16))
    decoded = decode_image(_pil_bytes(grey16, "PNG"), which="source")
    assert decoded.shape == (100, 100, 3) and decoded.dtype == np.uint8
    assert decoded.max() > 200  # scaled down, not clipped to white

    transparent = Image.new("RGBA", (100, 100), (0, 0, 255, 0))
    decoded = decode_image(_pil_bytes(transparent, "PNG"), which="source")
    assert decoded.shape == (100, 100, 3) and tuple(decoded[0, 0]) == (255, 255, 255)

    grey = Image.new("L", (100, 100), 77)
    assert tuple(decode_image(_pil_bytes(grey, "PNG"))[5, 5]) == (77, 77, 77)


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP"])
def test_max_side_decodes_a_bounded_frame_with_orientation(fmt):
    image = Image.new("RGB", (3000, 1000), (200, 30, 30))
    image.paste((30, 200, 30), (0, 0, 1500, 1000))  # green left half
    exif = Image.Exif()
    exif[0x0112] = 6  # displayed rotated: 1000 wide, 3000 tall, green on top
    decoded = decode_image(_pil_bytes(image, fmt, exif=exif), which="target", max_side=1024)
    height, width = decoded.shape[:2]
    assert 512 <= height <= 1024 and abs(width / height - 1 / 3) < 0.01
    assert decoded[height // 4, width // 2, 1] > 150 and decoded[3 * height // 4, width // 2, 2] > 150


def test_max_side_keeps_16bit_grey_scaled_not_clipped():
    grey16 = Image.fromarray((np.linspace(0, 65535, 3000 * 100).reshape(100, 3000)).astype(np.uint16))
    decoded = decode_image(_pil_bytes(grey16, "PNG"), which="source", max_side=1000)
    assert decoded.shape[1] <= 1000 and decoded.dtype == np.uint8
    assert 100 < decoded[decoded.shape[0] // 2, decoded.shape[1] // 2, 0] < 160  # mid-grey stays mid-grey


def _astronaut(width: int, height: int) -> np.ndarray:
    """scikit-image's astronaut enlarged to a phone photo's size, with sensor noise for fine detail."""
    photo = cv2.resize(data.astronaut()[:, :, ::-1], (width, height), interpolation=cv2.INTER_CUBIC)
    noise = np.random.default_rng(0).normal(0, 6, photo.shape)
    return np.clip(photo + noise, 0, 255).astype(np.uint8)


@pytest.mark.parametrize(("shape", "size"), [((2333, 1434), (629, 1024)), ((3025, 4031), (1024, 768)), ((720, 1280), (480, 270))])
def test_reduced_is_the_area_average_within_a_grey_level(shape, size):
    """The same picture as OpenCV's area averaging: the sensor noise a bilinear last step averages
    less apart (under 2 grey levels a pixel), the same brightness."""
    photo = _astronaut(shape[1], shape[0])
    out = reduced(photo, size)
    assert out.shape == (size[1], size[0], 3)
    exact = cv2.resize(photo, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    assert np.abs(out - exact).mean() < 2
    assert abs(float(out.mean()) - float(exact.mean())) < 0.2


def test_reduced_averages_detail_finer_than_its_pixels():
    """One-pixel stripes reduced 3.3x are grey, as area averaging makes them: bilinear sampling of
    the whole ratio picks stripes (a moire from black to white)."""
    stripes = np.zeros((800, 1200, 3), np.uint8)
    stripes[:, ::2] = 255
    out = reduced(stripes, (360, 240))
    assert out.shape == (240, 360, 3)
    assert np.abs(out.astype(np.float32) - 127.5).max() <= 1


def test_a_photo_decoded_again_is_the_one_decoded_before_read_only(astronaut, monkeypatch):
    """RecentPhotos: a selfie swapped into one target after another is decoded once per process; the
    array is read-only (every later job shares it), and the allowance bounds what is held."""
    from swap import image_io

    decodes = []
    real = image_io.decode_image
    monkeypatch.setattr(image_io, "decode_image", lambda data, **kw: decodes.append(1) or real(data, **kw))
    photos = [encode_image(np.ascontiguousarray(np.roll(astronaut, i, axis=1)), "png") for i in range(3)]
    recent = image_io.RecentPhotos(max_bytes=2 * astronaut.nbytes)

    first = recent.decode(photos[0], which="source", max_pixels=10**7)
    assert recent.decode(photos[0], which="source", max_pixels=10**7) is first
    assert len(decodes) == 1 and np.array_equal(first, astronaut)
    with pytest.raises(ValueError):
        first[0, 0] = 0
    recent.decode(photos[1], which="source", max_pixels=10**7)
    recent.decode(photos[2], which="source", max_pixels=10**7)  # over the allowance: the oldest goes
    assert len(decodes) == 3
    recent.decode(photos[2], which="source", max_pixels=10**7)
    assert len(decodes) == 3
    assert recent.decode(photos[0], which="source", max_pixels=10**7) is not first
    assert len(decodes) == 4
    # Found by the digest of its bytes without them (a stored photo whose SHA-256 the platform took).
    assert recent.held(hashlib.sha256(photos[2]).hexdigest(), max_pixels=10**7) is not None
    assert recent.held(hashlib.sha256(photos[1]).hexdigest(), max_pixels=10**7) is None  # evicted
    assert recent.held(hashlib.sha256(photos[2]).hexdigest(), max_pixels=10**6) is None  # another limit
    # A damaged upload is refused as decode_image refuses it, and nothing is kept for it.
    with pytest.raises(InvalidImage):
        recent.decode(photos[1][: len(photos[1]) // 2], which="source", max_pixels=10**7)


def test_a_photo_larger_than_the_allowance_is_decoded_but_not_kept_and_evicts_nothing(astronaut):
    from swap import image_io

    recent = image_io.RecentPhotos(max_bytes=astronaut.nbytes)
    small = encode_image(astronaut, "png")
    kept = recent.decode(small, which="source", max_pixels=10**7)
    large = recent.decode(encode_image(cv2.resize(astronaut, (1024, 1024)), "png"), which="source", max_pixels=10**7)
    assert large.shape == (1024, 1024, 3)
    assert recent.decode(small, which="source", max_pixels=10**7) is kept


def _photo(width: int, height: int) -> Image.Image:
    """A detailed RGB picture of this size: the astronaut tiled and scaled, with fine noise."""
    picture = cv2.resize(np.tile(data.astronaut(), (2, 2, 1)), (width, height), interpolation=cv2.INTER_CUBIC)
    noise = np.random.default_rng(width * height).integers(-6, 7, picture.shape)
    return Image.fromarray(np.clip(picture.astype(np.int16) + noise, 0, 255).astype(np.uint8))


def _short_side_720(width: int, height: int) -> tuple[int, int]:
    """billing.pricing.processed_size for 720p (swap may not import billing): shorter side 720."""
    if min(width, height) <= 720:
        return width, height
    scale = 720 / min(width, height)
    return (720, round(height * scale)) if width <= height else (round(width * scale), 720)


@pytest.mark.parametrize("orientation", [None, 6])
def test_a_large_jpeg_scaled_to_a_size_is_decoded_reduced_and_returned_at_that_size(orientation, monkeypatch):
    rgb = _photo(2400, 1800)
    exif = Image.Exif()
    if orientation:
        exif[0x0112] = orientation  # a quarter turn: upright it is 1800x2400
    jpeg = _pil_bytes(rgb, "JPEG", exif=exif, quality=95)
    upright = (1800, 2400) if orientation else (2400, 1800)
    wanted = _short_side_720(*upright)
    drafts = []
    draft = JpegImagePlugin.JpegImageFile.draft
    monkeypatch.setattr(
        JpegImagePlugin.JpegImageFile, "draft", lambda self, mode, size: drafts.append(size) or draft(self, mode, size)
    )
    scaled = decode_image(jpeg, which="target", scaled_to=_short_side_720)
    assert (scaled.shape[1], scaled.shape[0]) == wanted
    assert drafts == [(1200, 900)]  # libjpeg decoded it at half size: 900 still covers the 720
    whole = decode_image(jpeg, which="target")
    assert (whole.shape[1], whole.shape[0]) == upright
    reference = cv2.resize(whole, wanted, interpolation=cv2.INTER_AREA)
    assert cv2.PSNR(scaled, reference) > 38  # the same picture, within what a JPEG's own error is


def test_a_picture_libjpeg_cannot_reduce_is_area_reduced_exactly_as_before():
    rgb = _photo(1500, 1000)  # half of 1000 is under 720: decoded whole
    for fmt in ("JPEG", "PNG"):
        encoded = _pil_bytes(rgb, fmt)
        whole = decode_image(encoded, which="target")
        scaled = decode_image(encoded, which="target", scaled_to=_short_side_720)
        np.testing.assert_array_equal(scaled, cv2.resize(whole, (1080, 720), interpolation=cv2.INTER_AREA))
    small = _pil_bytes(_photo(640, 480), "JPEG")  # under the size: as it is
    np.testing.assert_array_equal(decode_image(small, scaled_to=_short_side_720), decode_image(small))


def test_decodes_reduced_says_from_the_header_whether_libjpeg_would_decode_fewer_pixels():
    big = _photo(2400, 1800)
    assert decodes_reduced(_pil_bytes(big, "JPEG"), _short_side_720, 40_000_000)
    assert not decodes_reduced(_pil_bytes(big, "PNG"), _short_side_720, 40_000_000)  # not a JPEG
    assert not decodes_reduced(_pil_bytes(_photo(1500, 1000), "JPEG"), _short_side_720, 40_000_000)
    assert not decodes_reduced(b"not an image", _short_side_720, 40_000_000)
