"""Face analysis (detection + landmarks) per photo and per face: dlib (HOG + 68-point predictor)
against MediaPipe (BlazeFace full range + Face Mesh), on ../shared/faces as is, rotated, cut by
the frame edge, shrunk into a 720p frame (small faces) and enlarged to a phone photo's 3,000 px.
Prints faces found per case, false faces on noface_*, and CPU ms (this thread's CPU time: both run single-threaded in the caller,
so the figure holds on a busy machine) per frame and per face found. Figures only.

    python bench/face_analysis.py [--faces DIR] [--models-dir var/models] [--engines mediapipe] [--mode largest]
    python bench/face_analysis.py --hard   # occluded, blurred, dark, turned 60-180 degrees: recall

2026-12-04, MediaPipe, CPU ms a frame with faces, before -> after the reduced copy made by exact
halvings (swap/image_io.reduced): large (3,000 px) 63.7 -> 38.5 / 38.9, clean 23.3 -> 19.6 / 19.9,
small_720p 33.7 -> 32.9 / 33.4, rot50 22.4 -> 23.3 / 24.4 (one borderline face, biden_1 turned 50
degrees, score 0.60 at the 0.60 threshold, now found by no pass: its retries cost the time); 73 -> 72
faces in 84 frames, none on noface_*.

2026-12-05 (another machine, ~1.9x slower: one full-range call 4.9 ms against 2.6), before -> after
the wide pass (the whole copy once, on the model rewritten for its size, in place of overlapping
512-px tiles): clean 27.1 -> 24.5, edge_cut 21.9 -> 20.4, small_720p 46.1 -> 32.5, large 52.9 ->
43.1; rot50 32.6 -> 114 (biden_1 turned 50 degrees, found by neither: the tiles' false candidate
stopped the retries at 89 ms, now they and the CNN fallback run, 1.0 s); 72 -> 71 faces (group_1
in small_720p: one of its two 30-px faces, below the 40-px floor, lost), none on noface_* (one false
face on noface_1 large before). Sizes 28/34/40/48/60 px pasted 800 times into 1280x720 frames
(found at the model's 0.6): tiles 0.49/0.64/0.85/0.91/0.97 with 265 false candidates, wide pass
0.54/0.71/0.83/0.94/0.97 with 3. The six-portrait 1,920x1,080 group frame: 6 faces, 60.3 -> 44.8 ms
(10.0 -> 7.5 ms a face). --mode largest (a one-face job, a source; the wide pass only when the
square pass finds nothing): clean 9.6, edge_cut 9.1, large 12.6, small_720p 22.4 ms a frame.

2026-12-05 (a faster machine: a clean portrait 5.3-5.7 ms), --mode largest --repeats 5, two pairs
alternating, before -> after the wide pass runs alone once the square pass found nothing (it ran the
square pass again on the reduced copy): the five lone small faces of small_720p (biden_1,
eileen_collins_1, group_1, obama_1, obama_3) 25.6 / 26.4 / 23.8 / 25.5 / 25.7 and 27.6 / 26.5 / 24.9 /
23.2 / 23.0 -> 24.1 / 23.6 / 22.3 / 21.9 / 21.8 and 22.4 / 21.9 / 20.9 / 21.2 / 20.9 ms; the
detector's boxes identical on all 84 frames in both modes.

2026-12-05 (this machine: a clean portrait 5-6 ms), before -> after a try whose candidates Face Mesh
drops no longer ends the search, faces found only by a retry need mesh presence 0.9, the retries
add 180 and -60/60 degrees, the fallback behind BlazeFace is dlib's HOG alone (no CNN) and the
rotated copies are made from the reduced copy: 71 -> 71 faces in 84 frames, but biden_1 turned 50
degrees found (was missed) and noface_1 at 3,000 px no longer shows a false face (a rocket's nose,
found at -90 degrees, presence 0.83); rot50 91.9 -> 31.0 CPU ms a frame with faces (biden_1's
misses cost 837 ms, now found in 166); faceless frames 33-1,432 -> 133-606 ms (the Hubble deep
field's used to end at a false candidate at 33 ms; now every retry and HOG run: 475-606 ms).

2026-12-05 (the twenty-second session's machine, the fastest yet: a 1000x1000 float32 matmul 4.8 ms),
--mode largest: clean 4.1, rot25 4.5, edge_cut 4.1, large 4.4, small_720p 9.8, rot50 14.6 CPU ms a
frame with faces; the five lone small faces 15.4-17.2 ms. One of them (biden_1, its box 28 px), 20
calls each: the whole analysis 19.7 ms = the square pass 2.8 + the wide pass alone 12.3 (its
480x288 input) + the mesh and the rest ~4.6. WIDE_SPAN 512 (a 384x224 input, ~38 % fewer pixels,
a third more 34-px faces missed) would by that proportion still cost ~15 ms (estimated, not run).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swap.config import PipelineConfig
from swap.pipeline import LARGEST_FACE_MODE, Pipeline

FACES = Path(__file__).resolve().parents[2] / "shared" / "faces"


def cases(image: np.ndarray) -> dict[str, np.ndarray]:
    h, w = image.shape[:2]
    out = {"clean": image}
    for angle in (25, 50):
        m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
        out[f"rot{angle}"] = cv2.warpAffine(image, m, (w, h), borderMode=cv2.BORDER_REFLECT_101)
    out["edge_cut"] = np.ascontiguousarray(image[:, int(0.3 * w) :])
    frame = np.full((720, 1280, 3), 80, np.uint8)
    scale = 200 / max(h, w)  # the face about 40-80 px
    small = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    frame[400 : 400 + small.shape[0], 900 : 900 + small.shape[1]] = small
    out["small_720p"] = frame
    grow = 3000 / max(h, w)  # a phone photo's size (its analysis starts with a reduced copy)
    out["large"] = cv2.resize(image, (round(w * grow), round(h * grow)), interpolation=cv2.INTER_CUBIC)
    return out


def hard_cases(image: np.ndarray, face_box: np.ndarray) -> dict[str, np.ndarray]:
    """Ten harder pictures of one portrait whose face is at `face_box`: a mask over the mouth, a
    skin-coloured hand over half the face, dark hair over the eyes, blurred, dark, and turned 60,
    75, 100, 135 and 180 degrees."""
    h, w = image.shape[:2]
    x1, y1, x2, y2 = (int(v) for v in face_box)
    fw, fh = x2 - x1, y2 - y1
    out = {}
    covered = image.copy()
    cv2.rectangle(covered, (x1 - fw // 4, y1 + fh * 55 // 100), (x2 + fw // 4, y2 + fh // 3), (200, 200, 205), -1)
    out["mask_lower"] = covered
    covered = image.copy()
    cv2.ellipse(covered, ((x1 + x2) // 2 - fw // 5, (y1 + y2) // 2), (fw // 3, fh // 2), 0, 0, 360, (150, 170, 210), -1)
    out["hand_half"] = covered
    covered = image.copy()
    cv2.rectangle(covered, (x1 - fw // 4, y1 - fh // 3), (x2 + fw // 4, y1 + fh * 40 // 100), (30, 30, 30), -1)
    out["hair_eyes"] = covered
    out["blur"] = cv2.GaussianBlur(image, (0, 0), max(2, fw / 40))
    out["dark"] = np.clip(((image / 255.0) ** 3) * 255 * 0.6, 0, 255).astype(np.uint8)
    for angle in (60, 75, 100, 135, 180):
        m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
        out[f"rot{angle}"] = cv2.warpAffine(image, m, (w, h), borderMode=cv2.BORDER_REFLECT_101)
    return out


def hard(pipeline: Pipeline, faces_dir: Path) -> None:
    """`hard_cases` of every one-face portrait (at most 1,200 px): faces found, which try found
    them, CPU ms; the misses listed."""
    found, cpu_ms, total, misses = 0, 0.0, 0, []
    for path in sorted(faces_dir.glob("*.jpg")):
        if path.stem.startswith(("noface", "group")):
            continue
        image = cv2.imread(str(path))
        image = shrink_to(image, 1200)
        upright = pipeline.analyse(image, embed=False)[0]
        for case, frame in hard_cases(image, upright.box).items():
            report: dict = {}
            cpu = time.thread_time()
            faces = pipeline.analyse(frame, embed=False, report=report)
            cpu_ms += (time.thread_time() - cpu) * 1000
            total += 1
            found += bool(faces)
            if not faces:
                misses.append(f"{path.stem} {case}")
            print(f"{path.stem:<22}{case:<12}{len(faces):>3}  {report.get('found_by')}")
    print(f"hard cases: {found} of {total} found, {cpu_ms / total:.1f} CPU ms a picture; missed: {', '.join(misses)}")


def shrink_to(image: np.ndarray, max_side: int) -> np.ndarray:
    scale = max_side / max(image.shape[:2])
    return cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else image


def group_photo(faces_dir: Path, people: int = 6) -> np.ndarray:
    """A 1,920x1,080 frame of `people` one-face portraits side by side (3 x 2 cells, each scaled to
    fit its cell): the issue's group photo of six, each face ~150-300 px."""
    frame = np.full((1080, 1920, 3), 70, np.uint8)
    portraits = [p for p in sorted(faces_dir.glob("*.jpg")) if not p.stem.startswith(("noface", "group"))]
    for i, path in enumerate(portraits[:people]):
        image = cv2.imread(str(path))
        scale = min(640 / image.shape[1], 540 / image.shape[0])
        size = (int(image.shape[1] * scale), int(image.shape[0] * scale))
        small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        y, x = 540 * (i // 3), 640 * (i % 3)
        frame[y : y + small.shape[0], x : x + small.shape[1]] = small
    return frame


def analyse(pipeline: Pipeline, image: np.ndarray, repeats: int, mode: str) -> tuple[int, float, float]:
    pipeline.analyse(image, embed=False, mode=mode)  # warm
    cpu, wall = time.thread_time(), time.perf_counter()
    for _ in range(repeats):
        faces = pipeline.analyse(image, embed=False, mode=mode)
    return (
        len(faces),
        (time.thread_time() - cpu) * 1000 / repeats,
        (time.perf_counter() - wall) * 1000 / repeats,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--faces", type=Path, default=FACES)
    parser.add_argument("--models-dir", type=Path, default=Path("var/models"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engines", default="dlib,mediapipe", help="which to measure (dlib takes minutes)")
    parser.add_argument(
        "--mode",
        default="standard",
        choices=["standard", LARGEST_FACE_MODE],
        help="standard: every face (the all-faces search); largest: a job swapping one face, a source",
    )
    parser.add_argument("--hard", action="store_true", help="only the ten harder pictures of each portrait")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    if args.hard:
        hard(Pipeline(PipelineConfig(models_dir=args.models_dir)), args.faces)
        return
    engines = {
        "dlib": Pipeline(PipelineConfig(models_dir=Path(tempfile.mkdtemp()))),
        "mediapipe": Pipeline(PipelineConfig(models_dir=args.models_dir)),
    }
    engines = {name: engines[name] for name in args.engines.split(",")}
    if "mediapipe" in engines:
        assert engines["mediapipe"].backends["detector"] == "blazeface_full_range", "fetch mediapipe-face first"
    totals = {name: {"faces": 0, "cpu_ms": 0.0, "frames": 0} for name in engines}
    by_case: dict[tuple[str, str], list[float]] = {}
    print(f"{'photo':<22}{'case':<12}" + "".join(f"{n + ' faces':>17}{'cpu ms':>9}" for n in engines))
    for path in sorted(args.faces.glob("*.jpg")):
        image = cv2.imread(str(path))
        for case, frame in cases(image).items():
            row = f"{path.stem:<22}{case:<12}"
            for name, pipeline in engines.items():
                found, cpu_ms, _ = analyse(pipeline, frame, args.repeats, args.mode)
                totals[name]["faces"] += found
                totals[name]["cpu_ms"] += cpu_ms
                totals[name]["frames"] += 1
                if not path.stem.startswith("noface"):
                    by_case.setdefault((name, case), []).append(cpu_ms)
                row += f"{found:>17}{cpu_ms:>9.1f}"
            print(row)
    for (name, case), values in by_case.items():
        print(f"{name} {case}: {sum(values) / len(values):.1f} CPU ms a frame with faces")
    group = group_photo(args.faces)
    for name, pipeline in engines.items():
        found, cpu_ms, _ = analyse(pipeline, group, args.repeats, args.mode)
        per_face = cpu_ms / max(1, found)
        print(f"{name} six portraits in one 1920x1080 frame: {found} faces, {cpu_ms:.1f} CPU ms, {per_face:.1f} a face")
    for name, t in totals.items():
        per_frame = t["cpu_ms"] / max(1, t["frames"])
        per_face = t["cpu_ms"] / max(1, t["faces"])
        print(
            f"{name}: {t['faces']} faces in {t['frames']} frames, {per_frame:.1f} CPU ms a frame, {per_face:.1f} a face"
        )


if __name__ == "__main__":
    main()
