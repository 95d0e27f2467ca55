"""Moderation latency on CPU (prints figures, no asserts): per-check median ms per image, and the
total added screening latency for a source+target pair (budget: < 1 s on two cores).

Images: the astronaut, plus ../shared/faces when present. Uses a throwaway SQLite DB and one
blocked term so the OCR check really runs. CLIP is timed only when VISAGE_CLIP_CHECKPOINT is set.
Per image it also shows the share of the face time spent on rotated retries + the fallback
detector, and whether OCR ran its recogniser; pairs include a no-face target and a target whose
caption carries the blocked term (known-bad records are cleared between runs, so every run screens).

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

import django  # noqa: E402 - after the environment that configures it

django.setup()

from django.core.management import call_command  # noqa: E402 - after django.setup()

from moderation import clip, hashes, identities, nsfw, ocr, services  # noqa: E402 - after django.setup()
from moderation.models import BlockedTerm, ModerationRecord  # noqa: E402 - after django.setup()

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


def blocked_caption(rgb: np.ndarray) -> np.ndarray:
    """The photo at 1920x1080 with the blocked term as a 56 px caption (BGR)."""
    image = cv2.resize(np.ascontiguousarray(rgb[:, :, ::-1]), (1920, 1080))
    for colour, thickness in (((0, 0, 0), 9), ((255, 255, 255), 4)):
        cv2.putText(image, "FORBIDDEN DEAL", (200, 1000), cv2.FONT_HERSHEY_SIMPLEX, 2.2, colour, thickness)
    return image


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
    columns = ["hash", "nsfw", "faces", "retry", "ocr", "rec"] + (["clip"] if clip.get_classifier() else [])
    print(f"\nper-check median ms per image ({args.runs} runs, cv2 threads {cv2.getNumThreads()})")
    print(
        "  retry: of faces, the rotated retries + fallback detector (only when the first pass found nothing)"
    )
    print("  rec: recogniser runs per OCR read (0: the text detector found no box, nothing recognised)")
    print(f"{'image':<20} {'size':>10} " + " ".join(f"{c:>7}" for c in columns))
    found = images()
    for name, image in found.items():
        report: dict = {}
        recognitions = getattr(reader, "recognitions", None)
        row = {
            "hash": median_ms(lambda image=image: (hashes.phash(image), hashes.dhash(image)), args.runs),
            "nsfw": median_ms(lambda image=image: nsfw.get_detector().detect(image), args.runs),
            "faces": median_ms(
                lambda image=image, report=report: analyser.pipeline.analyse(image, report=report), args.runs
            ),
            "retry": report.get("retry_ms", 0.0),
            "ocr": median_ms(lambda image=image: reader.read(image), args.runs),
            "rec": float("nan") if recognitions is None else (reader.recognitions - recognitions) / args.runs,
        }
        if "clip" in columns:
            row["clip"] = median_ms(lambda image=image: clip.get_classifier().probabilities(image), args.runs)
        size = f"{image.shape[1]}x{image.shape[0]}"
        print(f"{name:<20} {size:>10} " + " ".join(f"{row[c]:7.1f}" for c in columns))

    detector = nsfw.get_detector()
    pair = [found["astronaut"], found.get("group_1", found["astronaut"])]
    singles = median_ms(lambda: [detector.detect(image) for image in pair], args.runs)
    print(f"\nNSFW for a pair: two runs {singles:.1f} ms", end="")
    if hasattr(detector, "detect_many"):
        print(f", one batched run {median_ms(lambda: detector.detect_many(pair), args.runs):.1f} ms")
    else:
        print(" (no batched run in this version)")

    astronaut = data.astronaut()
    source = cv2.imencode(".png", np.ascontiguousarray(astronaut[:, :, ::-1]))[1].tobytes()
    pairs = {
        "astronaut → astronaut (mirrored)": cv2.imencode(
            ".jpg", np.ascontiguousarray(astronaut[:, ::-1, ::-1])
        )[1].tobytes()
    }
    for stem in ("obama_1", "group_1", "paul_rudd_1", "noface_1"):
        if (FACES / f"{stem}.jpg").is_file():
            pairs[f"astronaut → {stem}"] = (FACES / f"{stem}.jpg").read_bytes()
    pairs["astronaut → caption 'FORBIDDEN' (rejects)"] = cv2.imencode(".jpg", blocked_caption(astronaut))[
        1
    ].tobytes()
    print("\ntotal screen_inputs latency for a source+target pair (median ms, includes decode and DB writes)")
    for label, target in pairs.items():
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            outcome = services.screen_inputs(subject_id=uuid.uuid4(), source=source, target=target)
            times.append((time.perf_counter() - started) * 1000)
            # A content reject makes the image known-bad: forget it, so every run screens it again.
            ModerationRecord.objects.filter(known_bad=True).delete()
        ms = statistics.median(times)
        print(f"  {label:<44} {ms:7.1f} ms  {outcome.decision} {outcome.code}")
    result = np.ascontiguousarray(astronaut[:, :, ::-1])  # the worker's unmarked BGR result
    ms = median_ms(lambda: services.screen_output(subject_id=uuid.uuid4(), pixels=result), args.runs)
    print(f"  {'screen_output (result image)':<44} {ms:7.1f} ms")


if __name__ == "__main__":
    main()
