"""Swap quality on real portraits, per mode: identity and artefact figures (prints, no asserts).

Sources are one photo each of a few people in ../shared/faces (see its README); every portrait
of a different person is a target, as is and transformed (rotated, low light, grayscale, an
occluding bar over the mouth, cut by the frame edge, blocky JPEG). For each swap:

- identity: dlib distance from the output face to the source and to the original target;
  d_alike: to the source photo under the target's own change of picture (low light, grayscale,
  blocky JPEG; the plain source for the others): the descriptor reads a picture's light as well as
  the person (the sources darkened as the low-light targets are move 0.11-0.18 from themselves), so
  an output in the target's low light is judged against the source in that light too;
- seam: mean gradient magnitude of the output along the boundary of the changed region over the
  target's own gradient there (1 = no added edge);
- border dE: CIE76 colour difference (Lab) between the output's skin just inside that boundary
  and the target's just outside it; border_dE_target: the same rings in the target itself (a face
  is rarely the colour of what surrounds it); dE_added: the difference of the two (what the swap
  added);
- sharpness: (face / surroundings Laplacian energy) of the output over the same of the target
  (1 = the face is as sharp as its picture); sharp_err: |ln sharpness| (a mean ratio near 1 can
  hide faces too soft and too crisp that cancel out);
- mouth: SSIM of the mouth region (from the HOG detector's box, not the landmark model) between
  output and target (1 = the target's expression kept);
- mouth_open_err, eye_open_err: |mouth (eye) opening of the result - the target's|, gap over width, from the
  judge's own 68 points (eyes: the worse of the two; 0 = the target's expression kept);
- occluder kept: share of the bar's pixels left unchanged (occluder transform only).

The changed region is where the output differs from the target, so no metric relies on the
swap's own landmarks. Also times one swap per mode at 720p and 1080p. A contact sheet
(target | fast | standard | hq) is written to var/bench/quality_contact_sheet.png.

Identity is also compared PAIRED between consecutive modes (the same source, target and
transform): mean difference of d_src and d_tgt, its 95 % t interval and how many swaps got
worse / better. `--per-swap FILE.csv` writes every swap's figures, one row a swap and mode.

    python bench/quality.py [--faces DIR] [--sources N] [--modes fast,standard,hq] [--no-timing]
        [--transforms clean,jpeg] [--per-swap var/bench/per_swap.csv] [--sheet-cases 60 --sheet-px 300]

BENCH_SWAP_ROOT=/path/to/an/older/checkout measures that checkout's engine (the "before"). The
README's figures are `--sources 6 --all-photos` (315 swaps a mode, about 11 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(os.environ.get("BENCH_SWAP_ROOT") or Path(__file__).resolve().parents[1])
sys.path.insert(0, str(ROOT))

from skimage.metrics import structural_similarity  # noqa: E402 - after ROOT is on sys.path

from swap.config import PipelineConfig  # noqa: E402 - after ROOT is on sys.path
from swap.errors import EngineError  # noqa: E402 - after ROOT is on sys.path
from swap.face_recognition.dlib_resnet import dlib_distance  # noqa: E402 - after ROOT is on sys.path
from swap.pipeline import Pipeline  # noqa: E402 - after ROOT is on sys.path
from swap.types import SwapOptions  # noqa: E402 - after ROOT is on sys.path

FACES = Path(__file__).resolve().parents[2] / "shared" / "faces"
# The judge's openings (its own 68 points, defined here so an older engine under BENCH_SWAP_ROOT is
# judged the same): (upper lid/lip points, lower ones, the two corners) -> gap over width.
JUDGE_MOUTH = ([61, 62, 63], [67, 66, 65], 48, 54)
JUDGE_EYES = (([37, 38], [41, 40], 36, 39), ([43, 44], [47, 46], 42, 45))
OUT = Path("var/bench")
THUMB = 150
TRANSFORMS = ("clean", "rotated", "lowlight", "grayscale", "occluder", "edge", "jpeg")
# The transforms that change the picture, not the face's place in it: a source can be made alike.
PICTURE_TRANSFORMS = ("lowlight", "grayscale", "jpeg")


def shrink(image: np.ndarray, max_side: int) -> np.ndarray:
    h, w = image.shape[:2]
    if not max_side or max(h, w) <= max_side:
        return image
    s = max_side / max(h, w)
    return cv2.resize(image, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA)


def person(path: Path) -> str:
    return re.sub(r"_\d+$", "", path.stem)


def portraits(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.glob("*.jpg")) if not p.stem.startswith(("noface_", "group_"))]


def options(mode: str) -> SwapOptions:
    try:
        return SwapOptions(mode=mode)
    except TypeError:  # an engine from before modes existed: hq meant "enhance"
        return SwapOptions(enhance=mode == "hq")


# -- transforms -------------------------------------------------------------------------------


def transform(image: np.ndarray, name: str, box: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The transformed target and, for the occluder, a 0/255 mask of the bar."""
    h, w = image.shape[:2]
    x1, y1, x2, y2 = box.astype(int)
    fw, fh = x2 - x1, y2 - y1
    if name == "clean":
        return image, None
    if name == "rotated":
        m = cv2.getRotationMatrix2D(((x1 + x2) / 2, (y1 + y2) / 2), 20, 1.0)
        return cv2.warpAffine(image, m, (w, h), borderMode=cv2.BORDER_REFLECT_101), None
    if name == "lowlight":
        dark = 255.0 * (image.astype(np.float32) / 255.0) ** 1.8 * 0.55
        noise = np.random.default_rng(1).normal(0, 4.0, image.shape)
        return np.clip(dark + noise, 0, 255).astype(np.uint8), None
    if name == "grayscale":
        return cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR), None
    if name == "occluder":
        out = image.copy()
        bar = np.zeros((h, w), np.uint8)
        by1, by2 = y1 + int(0.68 * fh), y1 + int(0.82 * fh)
        bx1, bx2 = x1 + int(0.05 * fw), x1 + int(0.55 * fw)
        cv2.rectangle(bar, (bx1, by1), (bx2, by2), 255, -1)
        out[bar > 0] = (200, 90, 30)  # a blue bar over half the mouth
        return out, bar
    if name == "edge":
        cut = max(0, x1 + int(0.3 * fw))
        return np.ascontiguousarray(image[:, cut:]), None
    if name == "jpeg":
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 12])
        return cv2.imdecode(data, cv2.IMREAD_COLOR), None
    raise ValueError(name)


# -- metrics ----------------------------------------------------------------------------------


def changed_region(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    diff = np.abs(after.astype(np.int16) - before.astype(np.int16)).max(axis=2)
    mask = (diff > 2).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((7, 7), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
    if count <= 1:
        return np.zeros_like(mask)
    biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    region = (labels == biggest).astype(np.uint8) * 255
    # Fill holes (mouth and eyes the swap kept): the face region is the outer contour.
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(region)
    cv2.drawContours(filled, contours, -1, 255, -1)
    return filled


def gradient(image: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    return cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))


def lab(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_BGR2LAB)


def laplacian_energy(image: np.ndarray, mask: np.ndarray) -> float:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    values = np.abs(cv2.Laplacian(grey, cv2.CV_32F))[mask > 0]
    return float(values.mean()) if values.size else float("nan")


def artefacts(target: np.ndarray, output: np.ndarray, box: np.ndarray) -> dict[str, float]:
    region = changed_region(target, output)
    area = cv2.countNonZero(region)
    if area < 200:
        return {}
    size = np.sqrt(area)
    k = max(3, int(0.03 * size)) | 1
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    inner = cv2.erode(region, kernel)
    outer = cv2.dilate(region, kernel)
    band = cv2.subtract(outer, inner)
    g_out, g_tgt = gradient(output), gradient(target)
    seam = float(g_out[band > 0].mean() / max(g_tgt[band > 0].mean(), 1e-3))

    inside_ring = cv2.subtract(
        region, cv2.erode(region, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3 * k, 3 * k)))
    )
    outside_ring = cv2.subtract(
        cv2.dilate(region, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3 * k, 3 * k))), region
    )
    l_out, l_tgt = lab(output), lab(target)
    d_e = float(np.linalg.norm(l_out[inside_ring > 0].mean(0) - l_tgt[outside_ring > 0].mean(0)))
    d_e_before = float(np.linalg.norm(l_tgt[inside_ring > 0].mean(0) - l_tgt[outside_ring > 0].mean(0)))

    big = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (int(0.6 * size) | 1,) * 2)
    around = cv2.subtract(cv2.dilate(region, big), outer)
    face = cv2.erode(region, kernel)
    sharp = (laplacian_energy(output, face) / max(laplacian_energy(output, around), 1e-3)) / max(
        laplacian_energy(target, face) / max(laplacian_energy(target, around), 1e-3), 1e-3
    )

    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    mx1, mx2 = int(x1 + 0.28 * w), int(x1 + 0.72 * w)
    my1, my2 = int(y1 + 0.68 * h), int(y1 + 0.95 * h)
    H, W = target.shape[:2]
    mx1, mx2, my1, my2 = max(mx1, 0), min(mx2, W), max(my1, 0), min(my2, H)
    mouth = float("nan")
    if mx2 - mx1 >= 7 and my2 - my1 >= 7:
        a = cv2.cvtColor(target[my1:my2, mx1:mx2], cv2.COLOR_BGR2GRAY)
        b = cv2.cvtColor(output[my1:my2, mx1:mx2], cv2.COLOR_BGR2GRAY)
        mouth = float(structural_similarity(a, b, data_range=255, win_size=7))
    return {
        "seam": seam,
        "border_dE": d_e,
        "border_dE_target": d_e_before,
        "dE_added": d_e - d_e_before,
        "sharpness": sharp,
        "sharp_err": abs(float(np.log(max(sharp, 1e-6)))),
        "mouth_ssim": mouth,
    }


def opening(points: np.ndarray, upper: list[int], lower: list[int], left: int, right: int) -> float:
    gap = np.linalg.norm(points[upper] - points[lower], axis=1).mean()
    return float(gap / (np.linalg.norm(points[right] - points[left]) or 1.0))


def expression_error(target_face, output_face) -> dict[str, float]:
    """How far the result's mouth and eye openings are from the target's, measured by the judge's
    own 68 points (dlib: independent of the engine's landmarks). Each eye on its own (a wink)."""
    a, b = target_face.landmarks_68, output_face.landmarks_68
    if a is None or b is None:
        return {}
    eyes = [abs(opening(b, *eye) - opening(a, *eye)) for eye in JUDGE_EYES]
    return {
        "mouth_open_err": abs(opening(b, *JUDGE_MOUTH) - opening(a, *JUDGE_MOUTH)),
        "eye_open_err": max(eyes),
    }


# -- sheet ------------------------------------------------------------------------------------


def thumb(image: np.ndarray, side: int = THUMB) -> np.ndarray:
    h, w = image.shape[:2]
    s = side / max(h, w)
    interpolation = cv2.INTER_AREA if s < 1 else cv2.INTER_NEAREST  # enlarged: the pixels as they are
    small = cv2.resize(image, (max(1, round(w * s)), max(1, round(h * s))), interpolation=interpolation)
    canvas = np.full((side, side, 3), 32, np.uint8)
    y, x = (side - small.shape[0]) // 2, (side - small.shape[1]) // 2
    canvas[y : y + small.shape[0], x : x + small.shape[1]] = small
    return canvas


def write_sheet_pages(cases: list[tuple[str, list[np.ndarray]]], count: int, stem: str) -> list[Path]:
    """`count` of the cases, spread evenly over all of them (every source, target and transform),
    as pages of ten (two columns of five: target | each mode), each crop at the size given (--sheet-px;
    600 px crops of a 150-300 px face are the 2x look the issue asks for). Labelled source -> target."""
    if not cases:
        return []
    picked = [cases[round(i)] for i in np.linspace(0, len(cases) - 1, min(count, len(cases)))]
    pages = []
    for start in range(0, len(picked), 10):
        rows = []
        for label, cells in picked[start : start + 10]:
            row = np.hstack(cells).copy()
            cv2.putText(row, label, (6, 22), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 3, cv2.LINE_AA)
            cv2.putText(row, label, (6, 22), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1, cv2.LINE_AA)
            rows.append(row)
        while len(rows) % 2:
            rows.append(np.zeros_like(rows[0]))
        half = len(rows) // 2
        page = np.hstack(
            [
                np.vstack(rows[:half]),
                np.full((half * rows[0].shape[0], 8, 3), 255, np.uint8),
                np.vstack(rows[half:]),
            ]
        )
        path = OUT / f"{stem}_{start // 10 + 1:02d}.png"
        cv2.imwrite(str(path), page)
        pages.append(path)
    return pages


def face_crop(image: np.ndarray, box: np.ndarray, pad: float = 0.35) -> np.ndarray:
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    a = np.array([x1 - pad * w, y1 - pad * h, x2 + pad * w, y2 + pad * h]).round().astype(int)
    a = np.clip(a, 0, [image.shape[1], image.shape[0], image.shape[1], image.shape[0]])
    return image[a[1] : a[3], a[0] : a[2]]


def nearest_face(faces, box):
    centre = (box[:2] + box[2:]) / 2
    return min(faces, key=lambda f: float(np.linalg.norm((f.box[:2] + f.box[2:]) / 2 - centre)), default=None)


def to_frame(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """The portrait scaled to fill `height`, centred on a blurred copy of itself (a video frame)."""
    h, w = image.shape[:2]
    s = height / h
    scaled = cv2.resize(image, (round(w * s), height), interpolation=cv2.INTER_CUBIC)
    canvas = cv2.GaussianBlur(cv2.resize(image, (width, height)), (0, 0), 15)
    x = (width - scaled.shape[1]) // 2
    if x >= 0:
        canvas[:, x : x + scaled.shape[1]] = scaled
    else:
        canvas = scaled[:, -x : -x + width]
    return canvas


def multi_photo(pipeline: Pipeline, photos: list[Path], images, analysed, modes: list[str]) -> None:
    """The same person from 1 photo and from all of theirs, onto every other person's portrait."""
    by_person: dict[str, list[Path]] = defaultdict(list)
    for p in photos:
        if analysed[p] and min(images[p].shape[:2]) > 200:
            by_person[person(p)].append(p)
    who = max(by_person, key=lambda k: len(by_person[k]))
    mine = by_person[who]
    if len(mine) < 2:
        print("no person with several photos; skipping the 1-vs-N figure")
        return
    reference = np.mean([analysed[p][0].embedding for p in mine], axis=0)  # fair to both
    sets = {"1 photo": [mine[0]], f"{len(mine)} photos": mine}
    targets = [t for t in photos if person(t) != who and analysed[t] and min(images[t].shape[:2]) > 200]
    print(
        f"\n{who}: 1 photo ({mine[0].stem}) vs {len(mine)} photos, onto {len(targets)} other people's portraits"
    )
    print(
        f"{'mode':9} {'source':9} "
        + " ".join(f"{k:>11}" for k in ("closer", "d_src", "d_tgt", "seam", "border_dE", "mouth_ssim"))
    )
    for mode in modes:
        for label, paths in sets.items():
            identity = pipeline.prepare_source([images[p] for p in paths])
            figs = []
            for t in targets:
                result = pipeline.swap_frame(identity, images[t], options(mode))
                used = result.faces_used[0]
                out_face = nearest_face(pipeline.analyse(result.image), used.box)
                if out_face is None:
                    continue
                d_src = dlib_distance(out_face.embedding, reference)
                d_tgt = dlib_distance(out_face.embedding, analysed[t][0].embedding)
                f = {"closer": float(d_src < d_tgt), "d_src": d_src, "d_tgt": d_tgt}
                f.update(artefacts(images[t], result.image, used.box))
                figs.append(f)
            cells = [
                f"{np.mean([f[k] for f in figs if k in f]):11.3f}"
                for k in ("closer", "d_src", "d_tgt", "seam", "border_dE", "mouth_ssim")
            ]
            print(f"{mode:9} {label:9} " + " ".join(cells))


def paired(rows: dict[tuple[str, str], list[dict]], before: str, after: str) -> None:
    """Per swap (same source, target, transform) `after` minus `before`: mean, 95 % t interval,
    and how many swaps got worse / better (d_src up / down; d_tgt down / up)."""

    def by_swap(mode: str) -> dict[tuple, dict]:
        return {
            (f["source"], f["target"], f["transform"]): f
            for (m, _), lst in rows.items()
            if m == mode
            for f in lst
            if "source" in f
        }

    a, b = by_swap(before), by_swap(after)
    for key, worse_if_up in (("d_src", True), ("d_tgt", False)):
        diff = np.array([b[s][key] - a[s][key] for s in a.keys() & b.keys() if key in a[s] and key in b[s]])
        if diff.size < 2:
            continue
        half = 1.96 * diff.std(ddof=1) / np.sqrt(diff.size)
        worse = int((diff > 0).sum() if worse_if_up else (diff < 0).sum())
        better = int((diff < 0).sum() if worse_if_up else (diff > 0).sum())
        print(
            f"paired {key} {after} - {before}: {diff.mean():+.4f} (95 % CI {diff.mean() - half:+.4f} .. "
            f"{diff.mean() + half:+.4f}), n {diff.size}, worse {worse}, better {better}"
        )


def write_per_swap(path: Path, rows: dict[tuple[str, str], list[dict]], keys: tuple[str, ...]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["mode", "source", "target", "transform", *keys])
        for (mode, _), lst in rows.items():
            for fig in lst:
                if "source" in fig:
                    writer.writerow(
                        [mode, fig["source"], fig["target"], fig["transform"]]
                        + [f"{fig[k]:.6f}" if k in fig else "" for k in keys]
                    )
    print(f"per-swap figures: {path}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--faces", type=Path, default=FACES)
    parser.add_argument(
        "--models-dir",
        type=Path,
        default=Path("var/models"),
        help="the engine's models (var/models-none: dlib)",
    )
    parser.add_argument("--landmarker", default="auto", help="the engine's landmarker (e.g. dlib_shape68)")
    parser.add_argument("--sources", type=int, default=2, help="how many people to use as sources")
    parser.add_argument("--modes", default="fast,standard,hq")
    parser.add_argument("--transforms", default=",".join(TRANSFORMS))
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--sheet", default="quality_contact_sheet.png")
    parser.add_argument(
        "--sheet-cases",
        type=int,
        default=0,
        help="a paged contact sheet of this many cases spread over the whole run (0: the first 40)",
    )
    parser.add_argument("--sheet-px", type=int, default=300, help="crop size on the paged sheet")
    parser.add_argument("--multi", action="store_true", help="only the 1-photo vs several-photos figure")
    parser.add_argument("--max-side", type=int, default=800, help="shrink larger photos to this (0 = keep)")
    parser.add_argument("--per-swap", type=Path, help="write every swap's figures to this CSV")
    parser.add_argument(
        "--all-photos", action="store_true", help="every photo of a person as a target, not one"
    )
    args = parser.parse_args()
    modes = args.modes.split(",")
    transforms = args.transforms.split(",")
    photos = portraits(args.faces)
    if not photos:
        print(f"no portraits in {args.faces}; nothing to measure")
        return
    print(f"engine: {ROOT}", flush=True)
    pipeline = Pipeline(PipelineConfig(models_dir=args.models_dir, landmarker=args.landmarker))
    # Identity is judged by one fixed analyser (dlib's detector, 68 points and ResNet), whatever the
    # engine under test analyses with, so that figures of different engines compare.
    judge = Pipeline(PipelineConfig(models_dir=Path("var/models-none")))
    print(f"engine under test: {pipeline.backends}", flush=True)
    images = {p: shrink(cv2.imread(str(p)), args.max_side) for p in photos}
    analysed = {p: judge.analyse(img) for p, img in images.items()}
    if args.multi:
        multi_photo(pipeline, photos, images, analysed, modes)
        return
    people, sources = [], []
    for p in photos:  # first photo of each of the first N people that has a detectable face
        if analysed[p] and person(p) not in people and min(images[p].shape[:2]) > 200:
            people.append(person(p))
            sources.append(p)
        if len(sources) == args.sources:
            break
    identities = {p: pipeline.prepare_source([images[p]]) for p in sources}
    references = {p: judge.prepare_source([images[p]]).embedding for p in sources}
    alike = {}  # (source, transform) -> the source's embedding in that picture
    for p in sources:
        for name in set(transforms) & set(PICTURE_TRANSFORMS):
            try:
                alike[(p, name)] = judge.prepare_source(
                    [transform(images[p], name, analysed[p][0].box)[0]]
                ).embedding
            except EngineError:  # no face found in it: judged against the plain source
                print(f"{p.stem} [{name}]: no face in the source made alike")

    rows: dict[tuple[str, str], list[dict]] = defaultdict(list)
    sheet_rows = []
    sheet_cases: list[tuple[str, list[np.ndarray]]] = []
    seen: set[tuple[Path, str]] = set()
    for s in sources:
        for t in photos:
            if person(s) == person(t) or not analysed[t] or min(images[t].shape[:2]) < 200:
                continue
            if not args.all_photos and (s, person(t)) in seen:
                continue
            seen.add((s, person(t)))
            box = analysed[t][0].box
            for name in transforms:
                target, bar = transform(images[t], name, box)
                target_faces = judge.analyse(target)
                outputs = {}
                for mode in modes:
                    try:
                        result = pipeline.swap_frame(identities[s], target, options(mode))
                    except EngineError as exc:
                        rows[(mode, name)].append({"failed": 1.0})
                        print(f"{s.stem} -> {t.stem} [{name}, {mode}]: {exc}")
                        continue
                    used = result.faces_used[0]
                    outputs[mode] = (result.image, used.box)
                    out_face = nearest_face(judge.analyse(result.image), used.box)
                    ref = nearest_face(target_faces, used.box)
                    figures = {"failed": 0.0, "source": s.stem, "target": t.stem, "transform": name}
                    if out_face is not None and ref is not None:
                        d_src = dlib_distance(out_face.embedding, references[s])
                        d_tgt = dlib_distance(out_face.embedding, ref.embedding)
                        d_alike = dlib_distance(out_face.embedding, alike.get((s, name), references[s]))
                        figures.update(d_src=d_src, d_tgt=d_tgt, closer=float(d_src < d_tgt))
                        figures.update(d_alike=d_alike, closer_alike=float(d_alike < d_tgt))
                        figures.update(expression_error(ref, out_face))
                    figures.update(artefacts(target, result.image, used.box))
                    if bar is not None:
                        diff = np.abs(result.image.astype(int) - target).max(axis=2)
                        figures["occluder_kept"] = float((diff[bar > 0] <= 6).mean())
                    rows[(mode, name)].append(figures)
                if outputs and (len(sheet_rows) < 40 or args.sheet_cases):
                    any_box = next(iter(outputs.values()))[1]
                    side = args.sheet_px if args.sheet_cases else THUMB
                    cells = [thumb(face_crop(target, any_box), side)]
                    for mode in modes:
                        cells.append(
                            thumb(face_crop(outputs[mode][0], any_box), side)
                            if mode in outputs
                            else np.zeros((side, side, 3), np.uint8)
                        )
                    if args.sheet_cases:
                        sheet_cases.append((f"{s.stem} -> {t.stem} [{name}]", cells))
                    else:
                        sheet_rows.append(np.hstack(cells))

    keys = (
        "d_src",
        "d_tgt",
        "closer",
        "d_alike",
        "closer_alike",
        "seam",
        "border_dE",
        "border_dE_target",
        "dE_added",
        "sharpness",
        "sharp_err",
        "mouth_ssim",
        "mouth_open_err",
        "eye_open_err",
        "occluder_kept",
        "failed",
    )
    print(f"\nsources: {', '.join(p.stem for p in sources)}; modes: {', '.join(modes)}")
    print(f"{'mode':9} {'transform':10} {'n':>3} " + " ".join(f"{k:>13}" for k in keys))
    for mode in modes:
        for name in transforms + ["ALL"]:
            figs = [
                f for (m, n), lst in rows.items() if m == mode and (n == name or name == "ALL") for f in lst
            ]
            if not figs:
                continue
            cells = []
            for k in keys:
                values = [f[k] for f in figs if k in f and np.isfinite(f[k])]
                cells.append(f"{np.mean(values):13.3f}" if values else f"{'-':>13}")
            print(f"{mode:9} {name:10} {len(figs):3d} " + " ".join(cells))

    for before, after in zip(modes, modes[1:], strict=False):
        paired(rows, before, after)
    if args.per_swap:
        write_per_swap(args.per_swap, rows, keys)

    if sheet_cases:
        OUT.mkdir(parents=True, exist_ok=True)
        pages = write_sheet_pages(sheet_cases, args.sheet_cases, Path(args.sheet).stem)
        print(
            f"contact sheet, {min(args.sheet_cases, len(sheet_cases))} cases (target | {' | '.join(modes)}): "
            f"{', '.join(str(p) for p in pages)}"
        )
    if sheet_rows:
        OUT.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(OUT / args.sheet), np.vstack(sheet_rows))
        print(f"contact sheet (target | {' | '.join(modes)}): {OUT / args.sheet}")

    if args.no_timing:
        return
    target = images[next(t for t in photos if person(t) != person(sources[0]) and analysed[t])]
    print("\ntime per image (median of 3, one face, source analysed once):")
    for label, (w, h) in (("720p", (1280, 720)), ("1080p", (1920, 1080))):
        frame = to_frame(target, w, h)
        for mode in modes:
            times = []
            for _ in range(3):
                start = time.perf_counter()
                try:
                    pipeline.swap_frame(identities[sources[0]], frame, options(mode))
                except EngineError as exc:
                    print(f"  {label} {mode}: {exc}")
                    break
                times.append(time.perf_counter() - start)
            if times:
                print(f"  {label:6} {mode:9} {1000 * np.median(times):8.0f} ms")


if __name__ == "__main__":
    main()
