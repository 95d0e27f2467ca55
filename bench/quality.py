"""Identity transfer of the classical pipeline on real portraits (prints figures, no asserts).

For every ordered pair of photos of DIFFERENT people in ../shared/faces (see its README), swap
the source into the target and compare the dlib distance from the output face to the source
face and to the original target face. A contact sheet (source | target | result) is saved to
var/bench/quality_contact_sheet.png.

    python -m bench.quality [--faces DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swap.config import PipelineConfig  # noqa: E402
from swap.errors import EngineError  # noqa: E402
from swap.face_recognition.dlib_resnet import dlib_distance  # noqa: E402
from swap.pipeline import Pipeline  # noqa: E402

FACES = Path(__file__).resolve().parents[2] / "shared" / "faces"
OUT = Path("var/bench")
THUMB = 160


def person(path: Path) -> str:
    return re.sub(r"_\d+$", "", path.stem)


def portraits(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.glob("*.jpg")) if not p.stem.startswith(("noface_", "group_"))]


def nearest_face(faces, box):
    centre = (box[:2] + box[2:]) / 2
    return min(faces, key=lambda f: float(np.linalg.norm((f.box[:2] + f.box[2:]) / 2 - centre)), default=None)


def thumb(image: np.ndarray) -> np.ndarray:
    h, w = image.shape[:2]
    s = THUMB / max(h, w)
    small = cv2.resize(image, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)
    canvas = np.full((THUMB, THUMB, 3), 32, np.uint8)
    y, x = (THUMB - small.shape[0]) // 2, (THUMB - small.shape[1]) // 2
    canvas[y : y + small.shape[0], x : x + small.shape[1]] = small
    return canvas


def face_crop(image: np.ndarray, box: np.ndarray, pad: float = 0.6) -> np.ndarray:
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    a = np.array([x1 - pad * w, y1 - pad * h, x2 + pad * w, y2 + pad * h]).round().astype(int)
    a = np.clip(a, 0, [image.shape[1], image.shape[0], image.shape[1], image.shape[0]])
    return image[a[1] : a[3], a[0] : a[2]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--faces", type=Path, default=FACES)
    parser.add_argument("--limit", type=int, default=0, help="stop after N pairs (0 = all)")
    args = parser.parse_args()
    photos = portraits(args.faces)
    if not photos:
        print(f"no portraits in {args.faces}; nothing to measure")
        return

    pipeline = Pipeline(PipelineConfig(models_dir=Path("var/models-none")))
    images = {p: cv2.imread(str(p)) for p in photos}
    analysed = {p: pipeline.analyse(img) for p, img in images.items()}
    sources = {p: pipeline.prepare_source([images[p]]) for p in photos if analysed[p]}

    closer, to_src, to_tgt, rows, worst = 0, [], [], [], []
    n = 0
    start = time.perf_counter()
    for s in photos:
        for t in photos:
            if person(s) == person(t) or s not in sources or not analysed[t]:
                continue
            if args.limit and n >= args.limit:
                break
            try:
                result = pipeline.swap_frame(sources[s], images[t])
            except EngineError as exc:
                print(f"{s.stem} -> {t.stem}: {exc}")
                continue
            target_face = result.faces_used[0]
            out_face = nearest_face(pipeline.analyse(result.image), target_face.box)
            if out_face is None:
                print(f"{s.stem} -> {t.stem}: no face found in the result")
                d_src, d_tgt = 1.0, 0.0
            else:
                d_src = dlib_distance(out_face.embedding, sources[s].embedding)
                d_tgt = dlib_distance(
                    out_face.embedding, nearest_face(analysed[t], target_face.box).embedding
                )
            n += 1
            closer += d_src < d_tgt
            to_src.append(d_src)
            to_tgt.append(d_tgt)
            worst.append((d_src - d_tgt, f"{s.stem} -> {t.stem}"))
            rows.append(
                np.hstack(
                    [
                        thumb(face_crop(images[s], sources[s].face.box)),
                        thumb(face_crop(images[t], target_face.box)),
                        thumb(face_crop(result.image, target_face.box)),
                    ]
                )
            )
    elapsed = time.perf_counter() - start
    if not n:
        print("no pairs")
        return
    print(f"pairs of different people: {n} ({elapsed:.1f} s)")
    print(f"output closer to the source than to the target: {closer}/{n} = {100 * closer / n:.1f} %")
    print(f"mean dlib distance output->source: {np.mean(to_src):.3f}   output->target: {np.mean(to_tgt):.3f}")
    print(
        f"output within 0.6 of the source (dlib 'same person'): {100 * np.mean(np.array(to_src) < 0.6):.1f} %"
    )
    print("hardest pairs (d_src - d_tgt):", ", ".join(f"{name} {d:+.2f}" for d, name in sorted(worst)[-5:]))

    per_row = 4
    blank = np.zeros_like(rows[0])
    rows += [blank] * (-len(rows) % per_row)
    sheet = np.vstack([np.hstack(rows[i : i + per_row]) for i in range(0, len(rows), per_row)])
    OUT.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(OUT / "quality_contact_sheet.png"), sheet)
    print(f"contact sheet: {OUT / 'quality_contact_sheet.png'}")


if __name__ == "__main__":
    main()
