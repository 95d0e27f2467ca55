"""Cost of the provenance and the visible mark; prints figures, asserts nothing.

    python bench/provenance.py [--seconds 60] [--repeat 5]

1. C2PA signing per image (720p and 1080p; JPEG, PNG, WebP): ms to sign, ms to read back and
   validate, bytes added;
2. C2PA signing of a 720p H.264 MP4 (a synthetic clip of --seconds), scaled to a minute: ms, bytes;
3. the visible mark: ms per 720p/1080p frame, and 720p encode fps with and without the mark
   (composited in the encoder's thread, as process_clip does);
4. output moderation's unmarked samples of the 720p clip: keeping them on the way to the encoder
   (process_clip's keep=, a scaled copy per sample, plus a JPEG each for the join as a segmented
   job stores them) against what it replaced (decoding the marked result for its samples and its poster).
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import django
import numpy as np
from django.conf import settings
from PIL import Image
from skimage import data as skdata

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def configure(data_dir: Path) -> None:
    settings.configure(
        DATA_DIR=data_dir,
        SERVICE_NAME="Visage",
        PROVENANCE_ENABLED=True,
        C2PA_CERT="",
        C2PA_KEY="",
        C2PA_TRUST_ANCHORS="",
        C2PA_TSA_URL="",
        MARK_ENABLED=True,
        MARK_TEXT="AI-generated",
        MARK_POSITION="bottom-right",
        MARK_HEIGHT_FRACTION=0.10,
        INSTALLED_APPS=[],
    )
    django.setup()


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def photo(width: int, height: int) -> np.ndarray:
    import cv2

    return cv2.resize(skdata.astronaut(), (width, height), interpolation=cv2.INTER_AREA)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the 720p test clip")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="visage-bench-provenance-"))
    configure(tmp)

    from swap.mark import VisibleMark
    from swap.video import io as video_io
    from swap.video import synthetic
    from webapp.media import provenance

    claim = provenance.ResultClaim(
        content_id="00000000-0000-4000-8000-000000000000",
        title="bench",
        inputs_sha256="0" * 64,
        target_sha256="0" * 64,
        target_media_type="image/jpeg",
        engine={"name": "visage-swap", "version": "bench", "swapper": "classical"},
    )
    provenance.ensure_dev_chain()

    print("1. C2PA signing per image (median of", args.repeat, "runs)")
    for width, height in ((1280, 720), (1920, 1080)):
        rgb = photo(width, height)
        for fmt, media_type in (("JPEG", "image/jpeg"), ("PNG", "image/png"), ("WEBP", "image/webp")):
            buffer = io.BytesIO()
            Image.fromarray(rgb).save(buffer, format=fmt, quality=95)
            data = buffer.getvalue()
            signed = provenance.sign(data, media_type=media_type, claim=claim)
            sign_ms = median_ms(
                lambda d=data, m=media_type: provenance.sign(d, media_type=m, claim=claim), args.repeat
            )
            read_ms = median_ms(lambda s=signed, m=media_type: provenance.read(s, media_type=m), args.repeat)
            state = provenance.read(signed, media_type=media_type).validation_state
            print(
                f"   {width}x{height} {fmt:4}: {len(data) / 1024:8.1f} KiB, sign {sign_ms:6.1f} ms, "
                f"read+validate {read_ms:6.1f} ms, +{len(signed) - len(data)} bytes ({state})"
            )

    print(f"2. C2PA signing of a {args.seconds:g} s 720p H.264 MP4 (25 fps, with audio)")
    clip = tmp / "clip.mp4"
    started = time.perf_counter()
    synthetic.write_clip(
        clip, synthetic.ClipSpec(width=1280, height=720, fps=25, seconds=args.seconds, audio=True), skdata.astronaut()
    )
    print(f"   (clip written in {time.perf_counter() - started:.1f} s: {clip.stat().st_size / 2**20:.1f} MiB)")
    sign_ms = []
    for _ in range(max(1, args.repeat // 2)):
        started = time.perf_counter()
        signed = provenance.sign_file(clip, media_type="video/mp4", claim=claim)
        sign_ms.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    report = provenance.read(signed, media_type="video/mp4")
    read_ms = (time.perf_counter() - started) * 1000
    added = signed.stat().st_size - clip.stat().st_size
    per_minute = 60 / args.seconds
    print(
        f"   sign {statistics.median(sign_ms):.0f} ms ({statistics.median(sign_ms) * per_minute:.0f} ms per minute), "
        f"read+validate {read_ms:.0f} ms, +{added} bytes ({report.validation_state})"
    )

    print("3. visible mark")
    mark = VisibleMark()
    for width, height in ((1280, 720), (1920, 1080)):
        frame = np.ascontiguousarray(photo(width, height)[:, :, ::-1])
        mark.apply(frame)  # render the badge once
        ms = median_ms(lambda f=frame: mark.apply(f), max(50, args.repeat * 10))
        print(f"   {width}x{height}: {ms:.2f} ms per frame (copy + blend)")
    frames = [np.ascontiguousarray(photo(1280, 720)[:, :, ::-1]) for _ in range(1)] * 150
    for label, marked in (("without mark", False), ("with mark", True)):
        part = tmp / f"part-{marked}.mp4"
        started = time.perf_counter()
        with video_io.PartWriter(part, width=1280, height=720, fps=Fraction(25), crf=20) as writer:
            for frame in frames:
                writer.write(mark.apply(frame) if marked else frame)
        seconds = time.perf_counter() - started
        print(f"   720p encode {label}: {len(frames) / seconds:.1f} fps")

    import cv2

    from swap.video.process import _resized_copy

    print(f"4. output moderation's unmarked samples of the {args.seconds:g} s 720p clip")
    info = video_io.probe(signed)
    wanted = sorted({*video_io.sample_indices(info.frames, info.duration_seconds), info.frames // 2})
    size = video_io.sample_size(info.width, info.height, 720)
    frame = np.ascontiguousarray(photo(1280, 720)[:, :, ::-1])
    started = time.perf_counter()
    kept = [(index, _resized_copy(frame, size)) for index in wanted]
    keep_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()  # as webapp.jobs.steps.segments.store_kept (all segments together)
    packed = [cv2.imencode(".jpg", f, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes() for _, f in kept]
    pack_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    video_io.sample_frames(signed)
    next(video_io.read_frames(signed, start=info.frames // 2, stop=info.frames // 2 + 1))
    decode_ms = (time.perf_counter() - started) * 1000
    print(
        f"   {len(wanted)} frames kept at {size}: {keep_ms:.0f} ms in the frame loop, packing for the join "
        f"{pack_ms:.0f} ms ({sum(map(len, packed)) / 2**20:.1f} MiB); replaced: decoding the marked result for its "
        f"samples and poster {decode_ms:.0f} ms"
    )


if __name__ == "__main__":
    main()
