"""Which faces HOG alone misses, and what angle retries and the CNN fallback find, at what cost.

For every portrait in ../shared/faces, as is and rotated / cut by the frame edge, runs the
engine's detector once with retries off (HOG alone) and once as the pipeline does (angle
retries, then dlib's CNN on a copy of at most 480 px), and prints who found the face and the
extra time the retries took. Prints figures only.

    python bench/detection.py [--faces DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swap.config import PipelineConfig
from swap.pipeline import build_detector

FACES = Path(__file__).resolve().parents[2] / "shared" / "faces"


def variants(image: np.ndarray, box: np.ndarray) -> dict[str, np.ndarray]:
    h, w = image.shape[:2]
    x1, _, x2, _ = box.astype(int)
    centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    out = {"clean": image}
    for angle in (25, 50, 70):
        m = cv2.getRotationMatrix2D(centre, angle, 1.0)
        out[f"rot{angle}"] = cv2.warpAffine(image, m, (w, h), borderMode=cv2.BORDER_REFLECT_101)
    out["edge40"] = np.ascontiguousarray(image[:, max(0, x1 + int(0.4 * (x2 - x1))) :])
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--faces", type=Path, default=FACES)
    args = parser.parse_args()
    photos = [p for p in sorted(args.faces.glob("*.jpg")) if not p.stem.startswith(("noface_", "group_"))]
    if not photos:
        print(f"no portraits in {args.faces}")
        return
    detector = build_detector(PipelineConfig(models_dir=Path("var/models-none")))
    found_hog, found_all, by, retry_ms, n = Counter(), Counter(), Counter(), {}, Counter()
    for path in photos:
        image = cv2.imread(str(path))
        faces = detector.detect(image, retries=False)
        if not faces:
            continue
        for name, frame in variants(image, faces[0].box).items():
            n[name] += 1
            found_hog[name] += bool(detector.detect(frame, retries=False))
            start = time.perf_counter()
            found = detector.detect(frame)
            elapsed = (time.perf_counter() - start) * 1000.0
            report = detector.last_report
            found_all[name] += bool(found)
            by[(name, report.found_by or "none")] += 1
            retry_ms.setdefault(name, []).append(report.retry_ms if report.retry_ms else 0.0)
            print(
                f"{path.stem:18} {name:7} found_by={report.found_by!s:14} retries={report.retry_ms:7.0f} ms total={elapsed:7.0f} ms"
            )
    print(
        f"\n{'variant':8} {'n':>3} {'HOG alone':>10} {'with retries+fallback':>22} {'mean retry ms':>14}  found by"
    )
    for name in n:
        who = ", ".join(f"{k[1]}={v}" for k, v in sorted(by.items()) if k[0] == name)
        print(
            f"{name:8} {n[name]:3d} {found_hog[name]:10d} {found_all[name]:22d} {np.mean(retry_ms[name]):14.0f}  {who}"
        )


if __name__ == "__main__":
    main()
