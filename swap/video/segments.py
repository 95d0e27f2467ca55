"""Cutting a clip into segments by frame index, so segments can run on different workers.

Cuts are frame indices (not timestamps) and every segment is re-encoded from its first frame,
so a segment's first frame is an IDR frame and joined segments repeat or drop nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Segment:
    index: int
    start: int  # first frame index
    stop: int | None  # one past the last; None for the last segment ("to the end of the stream")

    def frames_planned(self, total: int) -> int:
        return (total if self.stop is None else self.stop) - self.start


def segment_count(total_frames: int, fps: Fraction | float, segment_seconds: float, *, workers: int = 1) -> int:
    """How many segments of about `segment_seconds` a clip is cut into: one when it is not longer;
    a sliver at the end (under a quarter of a segment) joins the one before instead of costing a
    task. Rounded up to a multiple of the `workers` that will swap them, so none of them swaps a
    segment alone at the end while the others wait (a 30 s clip on two workers at 10 s: three
    segments took ~0.8 s longer than four on the 2-core CI machine)."""
    if total_frames <= 0 or segment_seconds <= 0:
        return 1
    per_segment = max(1, round(float(fps) * segment_seconds))
    count = math.ceil(total_frames / per_segment)
    if count > 1 and total_frames - (count - 1) * per_segment < per_segment / 4:
        count -= 1
    if count > 1 and workers > 1:
        count = min(total_frames, math.ceil(count / workers) * workers)
    return count


def plan_segments(total_frames: int, count: int) -> list[Segment]:
    """`count` segments of equal length (to a frame). The last one has no stop: container frame
    counts can be off by a frame or two (and are estimates for WebM), so the tail is always read to
    the end of the stream."""
    count = max(1, count)
    cuts = [index * total_frames // count for index in range(count)]
    return segments_from_starts(cuts)


def segments_from_starts(starts: list[int]) -> list[Segment]:
    """The segments beginning at `starts` (ascending frame indices, the first 0); the last one runs
    to the end of the stream. The job's run stores its cuts this way in the plan, so every segment
    task swaps exactly the frames the run planned, whichever version of the code planned them."""
    return [
        Segment(index, start, starts[index + 1] if index + 1 < len(starts) else None)
        for index, start in enumerate(starts)
    ]
