"""A photo target decoded for the job's resolution: the whole decode area-reduced (before 2026-12-06)
against webapp.jobs.steps.common.target_photo's path (libjpeg's reduced decode where it still covers
the resolution, then area-reduced). Prints, per photo size and resolution, the time of each (median
of `--repeats`, one thread) and the PSNR between the two pictures; asserts nothing.

    python -m bench.target_decode [--repeats 5]

The photo is a detailed one (four of scikit-image's photographs, tiled, scaled, with sensor-like
noise), saved as a quality-90 JPEG: the worst case for a reduced decode (a smooth picture is closer).
"""

from __future__ import annotations

import argparse
import functools
import io
import statistics
import time

import cv2
import numpy as np
from PIL import Image
from skimage import data

from billing.pricing import processed_size
from swap.image_io import decode_image

SIZES = [(4032, 3024), (3000, 2000), (1920, 1080)]
RESOLUTIONS = ["720p", "1080p"]


def photo(width: int, height: int) -> bytes:
    tiles = [cv2.resize(picture, (512, 512)) for picture in (data.astronaut(), data.chelsea(), data.coffee(), data.rocket())]
    base = np.vstack([np.hstack(tiles[:2]), np.hstack(tiles[2:])])
    noise = np.random.default_rng(0).integers(-8, 9, (height, width, 3))
    picture = np.clip(cv2.resize(base, (width, height), interpolation=cv2.INTER_CUBIC).astype(np.int16) + noise, 0, 255)
    buffer = io.BytesIO()
    Image.fromarray(picture.astype(np.uint8)).save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def timed(fn, repeats: int, *args, **kwargs):
    times, result = [], None
    for _ in range(repeats):
        started = time.thread_time()
        result = fn(*args, **kwargs)
        times.append((time.thread_time() - started) * 1000)
    return statistics.median(times), result


def whole_then_area(jpeg: bytes, size: tuple[int, int]):
    return cv2.resize(decode_image(jpeg), size, interpolation=cv2.INTER_AREA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    cv2.setNumThreads(1)  # as a worker runs OpenCV
    for width, height in SIZES:
        jpeg = photo(width, height)
        for resolution in RESOLUTIONS:
            size = processed_size(width, height, resolution)
            whole_ms, whole = timed(whole_then_area, args.repeats, jpeg, size)
            scaled_to = functools.partial(processed_size, resolution=resolution)
            reduced_ms, reduced = timed(decode_image, args.repeats, jpeg, scaled_to=scaled_to)
            psnr = cv2.PSNR(whole, reduced)
            print(
                f"{width}x{height} at {resolution} ({size[0]}x{size[1]}): whole decode + area {whole_ms:.1f} ms,"
                f" reduced decode + area {reduced_ms:.1f} ms, PSNR {'identical' if psnr > 300 else f'{psnr:.2f} dB'}"
            )


if __name__ == "__main__":
    main()
