"""MediaPipe's BlazeFace detector (the `face_detection_*` graphs), decoded as MediaPipe does.

Input: the frame letterboxed (aspect kept, zero padding) to the model's square size, RGB scaled
to [-1, 1]. Output per SSD anchor: 16 regressors (box centre offset, size, then 6 keypoints:
right eye, left eye, nose tip, mouth centre, right and left ear tragion, the subject's
right/left) and a logit. Scores are sigmoids of the logit clipped to ±100, boxes and keypoints
are anchor-relative offsets in input pixels; overlapping detections are merged by MediaPipe's
weighted non-maximum suppression (the box is the score-weighted mean of its cluster).
The full-range model (192 px, 2304 anchors on one 48x48 layer) finds faces up to ~5 m away;
the short-range one (128 px, 896 anchors) is for selfie-distance faces.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from swap.image_io import reduced
from swap.inference.litert import load_tflite
from swap.types import Face


@dataclass(frozen=True)
class AnchorOptions:
    """MediaPipe's SsdAnchorsCalculatorOptions for one model (fixed-size anchors)."""

    size: int
    strides: tuple[int, ...]
    interpolated_scale_aspect_ratio: float  # 1.0: two anchors per cell; 0: one
    min_score: float


FULL_RANGE = AnchorOptions(size=192, strides=(4,), interpolated_scale_aspect_ratio=0.0, min_score=0.6)
SHORT_RANGE = AnchorOptions(
    size=128, strides=(8, 16, 16, 16), interpolated_scale_aspect_ratio=1.0, min_score=0.5
)
NMS_IOU = 0.3
RIGHT_EYE, LEFT_EYE, NOSE_TIP, MOUTH_CENTRE = 0, 1, 2, 3
# The second ("wide") pass looks at the whole copy at the scale a SIZE-px input gives a WIDE_SPAN-px
# square of it (192/416: a 40-px face is 18 px of input), on the model rewritten for that input
# size (swap.inference.tflite_resize). Its sides are rounded up to GRID, the network's total stride
# (192 px -> a 6x6 bottom layer), so every layer's grid is whole. On a larger input the model's
# scores run lower (0.5 where a 192-px tile of the same copy gives 0.6-0.8): at 512 (the old
# tiles' scale) it missed a third more 34-px faces than the tiles; at 416 it finds about as many
# (28/34/40/48/60 px: 0.54/0.71/0.83/0.94/0.97 against 0.49/0.64/0.85/0.91/0.97) with 3 false
# candidates where the tiles gave 265 (800 faces pasted into 1280x720 frames, 2026-12-05, the
# model's own threshold 0.6).
WIDE_SPAN = 416
# ... and only where it sees the copy at least this much larger than the square pass does (copies
# over 562 px): on smaller ones the square pass alone finds faces from ~30 px.
WIDE_GAIN = 1.35
GRID = 32


def ssd_anchors(options: AnchorOptions, height: int | None = None, width: int | None = None) -> np.ndarray:
    """(N, 2) anchor centres (x, y) in [0, 1] of an input of `height` x `width` (default: the model's
    own square size), in the model's output order (fixed anchor size 1)."""
    height, width = height or options.size, width or options.size
    centres = []
    layer = 0
    strides = options.strides
    while layer < len(strides):
        # Consecutive layers with the same stride share one grid (MediaPipe's layer merging).
        per_cell = 0
        last = layer
        while last < len(strides) and strides[last] == strides[layer]:
            per_cell += 1 + (1 if options.interpolated_scale_aspect_ratio > 0 else 0)
            last += 1
        rows, cols = int(np.ceil(height / strides[layer])), int(np.ceil(width / strides[layer]))
        for y in range(rows):
            for x in range(cols):
                centres.extend([((x + 0.5) / cols, (y + 0.5) / rows)] * per_cell)
        layer = last
    return np.array(centres, np.float32)


def weighted_nms(boxes: np.ndarray, points: np.ndarray, scores: np.ndarray, iou_threshold: float):
    """MediaPipe's WEIGHTED non-max suppression: each kept detection is the score-weighted mean of
    the candidates overlapping the best remaining one by more than `iou_threshold`."""
    order = list(np.argsort(-scores))
    kept = []
    while order:
        best = order[0]
        rest = np.array(order)
        x1 = np.maximum(boxes[best, 0], boxes[rest, 0])
        y1 = np.maximum(boxes[best, 1], boxes[rest, 1])
        x2 = np.minimum(boxes[best, 2], boxes[rest, 2])
        y2 = np.minimum(boxes[best, 3], boxes[rest, 3])
        inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
        area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        iou = inter / np.maximum(area[best] + area[rest] - inter, 1e-9)
        cluster = rest[iou > iou_threshold]
        weights = scores[cluster][:, None]
        box = (boxes[cluster] * weights).sum(0) / weights.sum()
        pts = (points[cluster] * weights[:, :, None]).sum(0) / weights.sum()
        kept.append((box, pts, float(scores[best])))
        order = [i for i in rest[iou <= iou_threshold]]
    return kept


class BlazeFaceDetector:
    """FaceDetector for MediaPipe's BlazeFace (full or short range)."""

    reports_inference_time = True
    wants_retries = True  # the pipeline wraps it in RetryingDetector (angle retries, dlib fallback)
    rough_landmarks = True  # mouth corners guessed: the mesh must run before aligning on landmarks_5

    def __init__(self, model_path: Path, runtime: object | None = None, *, name: str, max_batch: int = 1):
        self.name = name
        self.model = load_tflite(Path(model_path), name)
        size = self.model.input_shape[1]
        self.options = FULL_RANGE if size == FULL_RANGE.size else SHORT_RANGE
        self._anchors_by_size: dict[tuple[int, int], np.ndarray] = {}
        self.max_side = 1024  # the pipeline sets its detect_max_side
        self.upsample = 1  # 0: the square pass alone, no wide pass (RetryingDetector's largest_only)

    def detect(
        self, frame: np.ndarray, *, max_side: int | None = None, upsample: int | None = None
    ) -> list[Face]:
        """Faces on a copy of at most `max_side` px: the whole copy letterboxed into the model's
        square (faces from ~1/19 of its longer side), then, unless `upsample` is 0, the whole copy
        again at WIDE_SPAN's scale (faces from ~40 px). Candidates of both passes are merged by one
        weighted NMS."""
        return self._detect(frame, max_side, self.upsample if upsample is None else upsample, square=True)

    def detect_small(self, frame: np.ndarray, *, max_side: int | None = None) -> list[Face]:
        """The wide pass alone: faces from ~40 px that the square pass cannot see, for a caller whose
        square pass (`upsample=0`) just found nothing on the same frame (RetryingDetector's
        `largest_only`), so it is not run twice. Nothing where the frame is too small for a wide
        pass (the square pass was then the whole search)."""
        return self._detect(frame, max_side, 1, square=False)

    def _detect(self, frame: np.ndarray, max_side: int | None, upsample: int, *, square: bool) -> list[Face]:
        h, w = frame.shape[:2]
        scale = min(1.0, (max_side or self.max_side) / max(h, w))
        wide = upsample > 0 and max(h, w) * scale > WIDE_SPAN * WIDE_GAIN
        if not wide:  # one pass: straight from the frame to the detector's input, no copy between
            if not square:
                return []
            scale = 1.0
        copy = frame if scale == 1.0 else reduced(frame, (round(w * scale), round(h * scale)))
        passes = [self._candidates(copy)] if square else []
        if wide:
            boxes, points, scores = self._candidates(copy, wide=True)
            # Larger faces are the square pass's: the wide pass sees them larger than it was trained on.
            small = (boxes[:, 2:] - boxes[:, :2]).max(1) < WIDE_SPAN / 3
            passes.append((boxes[small], points[small], scores[small]))
        boxes, points, scores = (np.concatenate(parts) for parts in zip(*passes, strict=True))
        faces = []
        for box, pts, score in weighted_nms(boxes, points, scores, NMS_IOU) if len(scores) else []:
            box = np.clip(box / scale, 0, [w, h, w, h]).astype(np.float32)
            if box[2] - box[0] < 2 or box[3] - box[1] < 2:
                continue
            faces.append(Face(box=box, score=score, landmarks_5=five_from_keypoints(pts / scale)))
        faces.sort(key=lambda f: f.area, reverse=True)
        return faces

    def _candidates(
        self, bgr: np.ndarray, *, wide: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Boxes (x1, y1, x2, y2), 6 keypoints and scores above the threshold, in `bgr`'s pixels:
        from the model's square input with `bgr` letterboxed and centred in it, as MediaPipe's
        ImageToTensorCalculator does (keep_aspect_ratio), or `wide`: from an input of `bgr`'s shape
        at WIDE_SPAN's scale, `bgr` in its top left corner. The model takes RGB: the input, not the
        picture, is converted (a 3,000-px photo's conversion cost 1.7 ms)."""
        size = self.options.size
        h, w = bgr.shape[:2]
        if wide:  # the input's sides rounded up to GRID, and `bgr` scaled up to fill it on one side
            height, width = (int(np.ceil(side * size / WIDE_SPAN / GRID)) * GRID for side in (h, w))
            scale = min(height / h, width / w)
            pad_x = pad_y = 0.0
            model = self.model.at_input_size(height, width)
        else:
            scale = size / max(h, w)
            height = width = size
            pad_x, pad_y = (size - w * scale) / 2.0, (size - h * scale) / 2.0
            model = self.model
        matrix = np.array([[scale, 0, pad_x], [0, scale, pad_y]], np.float32)
        interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
        canvas = cv2.warpAffine(bgr, matrix, (width, height), flags=interpolation, borderValue=(0, 0, 0))
        canvas = cv2.cvtColor(canvas, cv2.COLOR_BGR2RGB)
        regressors, logits = model.run(canvas.astype(np.float32)[None] / 127.5 - 1.0)
        raw, logits = regressors.reshape(-1, 16), logits.reshape(-1).astype(np.float64)
        scores = 1.0 / (1.0 + np.exp(-np.clip(logits, -100.0, 100.0)))
        keep = scores >= self.options.min_score
        raw, scores = raw[keep], scores[keep]
        anchors = self._anchors(height, width)[keep]
        centres = raw[:, :2] + anchors
        half = raw[:, 2:4] / 2.0
        boxes = np.concatenate([centres - half, centres + half], axis=1)
        points = raw[:, 4:16].reshape(-1, 6, 2) + anchors[:, None, :]
        pad = np.array([pad_x, pad_y], np.float32)
        return (boxes - np.tile(pad, 2)) / scale, (points - pad) / scale, scores

    def _anchors(self, height: int, width: int) -> np.ndarray:
        """Anchor centres in input pixels for an input of `height` x `width` (kept per size: sizes are
        GRID multiples of at most max_side's wide input, so a few hundred at most, ~1-70 kB each)."""
        anchors = self._anchors_by_size.get((height, width))
        if anchors is None:
            anchors = ssd_anchors(self.options, height, width) * np.array([width, height], np.float32)
            self._anchors_by_size[(height, width)] = anchors
        return anchors


def five_from_keypoints(points: np.ndarray) -> np.ndarray:
    """Rough 5 alignment points from BlazeFace's 6 keypoints (eyes, nose tip; the mouth corners
    put either side of the mouth centre, along the eye line). The mesh replaces them; until then
    the eyes carry the face's roll, which the mesh's crop uses."""
    right_eye, left_eye, nose, mouth = (points[i] for i in (RIGHT_EYE, LEFT_EYE, NOSE_TIP, MOUTH_CENTRE))
    half_mouth = (left_eye - right_eye) * 0.4
    # Image order of Face.landmarks_5: the eye on the image's left first (the subject's right).
    return np.array([right_eye, left_eye, nose, mouth - half_mouth, mouth + half_mouth], np.float32)
