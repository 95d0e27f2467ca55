from __future__ import annotations

import cv2
import numpy as np
from skimage import data as skdata

from moderation import hashes


def test_phash_survives_reencoding_and_resizing(astronaut_rgb):
    original = np.ascontiguousarray(astronaut_rgb[:, :, ::-1])
    jpeg = cv2.imdecode(cv2.imencode(".jpg", original, [cv2.IMWRITE_JPEG_QUALITY, 60])[1], cv2.IMREAD_COLOR)
    smaller = cv2.resize(original, (300, 300), interpolation=cv2.INTER_AREA)
    for copy in (jpeg, smaller):
        assert hashes.hamming(hashes.phash(original), hashes.phash(copy)) <= 4
        assert hashes.hamming(hashes.dhash(original), hashes.dhash(copy)) <= 6


def test_different_images_are_far_apart(astronaut_rgb):
    a = hashes.phash(np.ascontiguousarray(astronaut_rgb[:, :, ::-1]))
    b = hashes.phash(np.ascontiguousarray(skdata.coffee()[:, :, ::-1]))
    assert len(a) == 16 and hashes.hamming(a, b) > 16


def test_nearest_finds_the_closest_known_hash():
    known = ["0000000000000000", "ffffffffffffffff", "00000000000000ff"]
    assert hashes.nearest("000000000000000f", known) == (0, 4)
    assert hashes.nearest("ffffffffffffff00", known)[0] == 1
    assert hashes.nearest("0000000000000000", []) is None


def test_both_hashes_from_one_grey_conversion_are_the_same_values(astronaut_rgb):
    image = np.ascontiguousarray(skdata.coffee()[:, :, ::-1])
    assert hashes.phash_dhash(image) == (hashes.phash(image), hashes.dhash(image))


def test_thumbnails_are_opencvs_area_resize_pixel_for_pixel(astronaut_rgb):
    """Stored known-bad hashes were taken with cv2.resize(INTER_AREA): the faster thumbnails must
    give the same pixels, so every stored hash still matches its image exactly."""
    rng = np.random.default_rng(3)
    greys = [
        cv2.cvtColor(astronaut_rgb, cv2.COLOR_RGB2GRAY),  # 512: an integer ratio to 32
        rng.integers(0, 256, (333, 517), dtype=np.uint8),  # fractional ratios, noise (rounding ties)
        rng.integers(0, 256, (720, 1280), dtype=np.uint8),
        rng.integers(0, 256, (37, 45), dtype=np.uint8),  # just above the thumbnail
        rng.integers(0, 256, (20, 50), dtype=np.uint8),  # below it: enlarged by OpenCV itself
    ]
    for grey in greys:
        expected = [cv2.resize(grey, size, interpolation=cv2.INTER_AREA) for size in ((32, 32), (9, 8))]
        got = hashes.thumbnails(grey, [(32, 32), (9, 8)])
        for e, g in zip(expected, got, strict=True):
            assert g.dtype == np.uint8 and np.array_equal(e, g)
