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


def segment_count(
    total_frames: int,
    fps: Fraction | float,
    shortest_seconds: float,
    longest_seconds: float,
    *,
    workers: int = 1,
) -> int:
    """How many segments a clip is cut into: one for each of the `workers` that will swap them, so
    that each worker starts once (a segment costs its worker ~0.7 s besides its frames: the clip's
    download and probe, the source, the seek, the pipeline filling and draining, the part's upload;
    a 30 s 720p clip on two workers of the 2-core CI machine: 15.3 s end to end in two segments,
    17.3 s in four). Fewer when the clip would make segments shorter than `shortest_seconds`
    (a short clip is not worth the start costs; none counted: one), more when it would make them
    longer than `longest_seconds` (what one retry redoes and one task's timeout must allow), then
    rounded up to a multiple of the workers, so none of them swaps a segment alone at the end
    while the others wait. Never more segments than frames."""
    if total_frames <= 0 or float(fps) <= 0:
        return 1
    seconds = total_frames / float(fps)
    count = max(1, workers)
    if shortest_seconds > 0:
        count = min(count, max(1, math.floor(seconds / shortest_seconds)))
    if longest_seconds > 0:  # a clip exactly the longest stays whole despite float rounding
        count = max(count, math.ceil(seconds / longest_seconds - 1e-9))
    if count > workers > 1:
        count = math.ceil(count / workers) * workers
    return min(total_frames, count)


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
