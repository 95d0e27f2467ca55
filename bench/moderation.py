"""Moderation latency on CPU (prints figures, no asserts): per-check median ms per image, and the
total added screening latency for a source+target pair (the issue's budget: < 1 s on two cores).

Images: the astronaut, plus ../shared/faces when present. Uses a throwaway SQLite DB and one
blocked term so the OCR check really runs. CLIP is timed only when VISAGE_CLIP_CHECKPOINT is set.

    python bench/moderation.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import cv2
import numpy as np
from skimage import data

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
_tmp = Path(tempfile.mkdtemp(prefix="visage-bench-mod-"))
os.environ.setdefault("VISAGE_DATA_DIR", str(_tmp))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{_tmp / 'bench.sqlite3'}")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from moderation import clip, hashes, identities, nsfw, ocr, services  # noqa: E402
from moderation.models import BlockedTerm  # noqa: E402

FACES = Path(__file__).resolve().parents[2] / "shared" / "faces"


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def images() -> dict[str, np.ndarray]:
    found = {"astronaut": np.ascontiguousarray(data.astronaut()[:, :, ::-1])}
    if FACES.is_dir():
        for path in sorted(FACES.glob("*.jpg")):
            found[path.stem] = cv2.imread(str(path))
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    BlockedTerm.objects.get_or_create(term="forbidden")
    started = time.perf_counter()
    services.warm_up()
    print(f"models loaded (warm_up) in {time.perf_counter() - started:.1f} s; clip: {clip.status()}")

    analyser, reader = identities.get_analyser(), ocr.get_reader()
    columns = ["hash", "nsfw", "faces", "ocr"] + (["clip"] if clip.get_classifier() else [])
    print(f"\nper-check median ms per image ({args.runs} runs, cv2 threads {cv2.getNumThreads()})")
    print(f"{'image':<20} {'size':>10} " + " ".join(f"{c:>7}" for c in columns))
    for name, image in images().items():
        row = {
            "hash": median_ms(lambda image=image: (hashes.phash(image), hashes.dhash(image)), args.runs),
            "nsfw": median_ms(lambda image=image: nsfw.get_detector().detect(image), args.runs),
            "faces": median_ms(lambda image=image: analyser.faces(image), args.runs),
            "ocr": median_ms(lambda image=image: reader.read(image), args.runs),
        }
        if "clip" in columns:
            row["clip"] = median_ms(lambda image=image: clip.get_classifier().probabilities(image), args.runs)
        size = f"{image.shape[1]}x{image.shape[0]}"
        print(f"{name:<20} {size:>10} " + " ".join(f"{row[c]:7.1f}" for c in columns))

    astronaut = data.astronaut()
    source = cv2.imencode(".png", np.ascontiguousarray(astronaut[:, :, ::-1]))[1].tobytes()
    pairs = {
        "astronaut → astronaut (mirrored)": cv2.imencode(
            ".jpg", np.ascontiguousarray(astronaut[:, ::-1, ::-1])
        )[1].tobytes()
    }
    for stem in ("obama_1", "group_1", "paul_rudd_1"):
        if (FACES / f"{stem}.jpg").is_file():
            pairs[f"astronaut → {stem}"] = (FACES / f"{stem}.jpg").read_bytes()
    print("\ntotal screen_inputs latency for a source+target pair (median ms, includes decode and DB writes)")
    for label, target in pairs.items():
        ms = median_ms(
            lambda target=target: services.screen_inputs(
                subject_id=uuid.uuid4(), source=source, target=target
            ),
            args.runs,
        )
        print(f"  {label:<40} {ms:7.1f} ms")
    result = cv2.imencode(".jpg", np.ascontiguousarray(astronaut[:, :, ::-1]))[1].tobytes()
    ms = median_ms(lambda: services.screen_output(subject_id=uuid.uuid4(), data=result), args.runs)
    print(f"  {'screen_output (result image)':<40} {ms:7.1f} ms")


if __name__ == "__main__":
    main()
