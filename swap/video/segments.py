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


def plan_segments(total_frames: int, fps: Fraction | float, segment_seconds: float) -> list[Segment]:
    """Equal segments of about `segment_seconds`; one segment when the clip is not longer.

    The last segment has no stop: container frame counts can be off by a frame or two (and are
    estimates for WebM), so the tail is always read to the end of the stream.
    """
    per_segment = max(1, round(float(fps) * segment_seconds)) if segment_seconds > 0 else total_frames
    count = max(1, math.ceil(total_frames / per_segment)) if total_frames > 0 else 1
    if count > 1 and total_frames - (count - 1) * per_segment < per_segment / 4:
        count -= 1  # a sliver at the end joins the previous segment instead of costing a job
    segments = []
    for index in range(count):
        stop = None if index == count - 1 else (index + 1) * per_segment
        segments.append(Segment(index, index * per_segment, stop))
    return segments
