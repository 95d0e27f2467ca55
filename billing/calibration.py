"""GPU-time calibration: the seed values (seconds per frame) used until anything is measured, and the
speed model quotes use once the worker's warm-up or finished jobs have been measured (pure logic)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from typing import Any

from billing.choices import MediaKind, Mode, Resolution

# Weight of one new measurement in the exponential moving average.
EMA_ALPHA = Decimal("0.2")

DEFAULT_GPU_SECONDS_PER_FRAME: dict[tuple[str, str], Decimal] = {
    (Mode.FAST, Resolution.P720): Decimal("0.050"),
    (Mode.FAST, Resolution.P1080): Decimal("0.080"),
    (Mode.FAST, Resolution.ORIGINAL): Decimal("0.150"),
    (Mode.STANDARD, Resolution.P720): Decimal("0.100"),
    (Mode.STANDARD, Resolution.P1080): Decimal("0.150"),
    (Mode.STANDARD, Resolution.ORIGINAL): Decimal("0.300"),
    (Mode.HQ, Resolution.P720): Decimal("0.250"),
    (Mode.HQ, Resolution.P1080): Decimal("0.400"),
    (Mode.HQ, Resolution.ORIGINAL): Decimal("0.800"),
}


# --- The speed model quotes use --------------------------------------------------------
#
# Measured on the worker (a CPU build on shared cores, where "GPU time" is the CPU time the model
# calls consumed: swap.inference.clock): a job's GPU time is a fixed part (analysing
# the source photo: ~0.2 s) plus, per frame, a part that hardly depends on the size (swap and
# enhance run on a face crop) and a part that grows with the frame's pixels (detection; for videos
# 4.5 ms/frame at 192×192, 15 ms at 640×360, 48 ms at 1280×720). A photo's time barely depends on
# its size (detection runs on a copy of at most 1024 px). So GPU seconds are modelled, per mode
# and media kind, as
#
#     job + frame × frames + megapixel_frame × frames × megapixels
#
# fitted to the recent measurements (the worker's warm-up swaps at several sizes and lengths, then
# every finished job) by least squares on *relative* error (a 0.3 s photo counts as much as a
# 60 s clip), never with a negative coefficient. The quote is the model's prediction times a high
# percentile of measured / predicted over the same samples: the spread of the measurements, so
# the quote stays above nearly every charge while staying close to it.
#
# The samples are weighed by recency (RECENCY_HALF_LIFE): on a machine whose speed changes (other
# work on shared cores, throttling) the latest jobs say most about the next one. With equal weights
# 40 older jobs outvote 3 that ran twice as slow, and the next jobs are capped at the quote; with a
# half-life of 5 samples the quote covers them after those 3 (tests/billing/test_calibration.py).
# Each mode and media kind has its own samples, so on a mixed queue "5 samples" is ~15 jobs.
#
# Floats are fine here: these are statistics about seconds; the result is turned into a Decimal,
# rounded up, before any money is computed from it.

# Feature sets tried in order: the first that fits with no negative coefficient is used. A photo
# has one frame, so "frame" and "job" are the same there.
_FEATURE_SETS: dict[str, tuple[tuple[str, ...], ...]] = {
    MediaKind.IMAGE: (("job", "megapixel_frame"), ("job",)),
    MediaKind.VIDEO: (
        ("job", "frame", "megapixel_frame"),
        ("job", "megapixel_frame"),
        ("frame", "megapixel_frame"),
        ("job", "frame"),
        ("frame",),
    ),
}

GPU_SECONDS_PER_FRAME_PLACES = Decimal("0.000001")

# A measurement counts half as much as one this many samples newer (per mode and media kind).
RECENCY_HALF_LIFE = 5.0


@dataclass(frozen=True)
class SpeedSample:
    """One measurement: a job (or warm-up run) of `frames` frames of `pixels` pixels each took
    `gpu_seconds` GPU seconds in all."""

    frames: int
    pixels: int
    gpu_seconds: float


def _feature_values(names: Sequence[str], *, frames: int, pixels: int) -> list[float]:
    values = {"job": 1.0, "frame": float(frames), "megapixel_frame": frames * pixels / 1_000_000}
    return [values[name] for name in names]


@dataclass(frozen=True)
class SpeedModel:
    """GPU seconds of a job = Σ coefficient × feature (see SPEED_FEATURES)."""

    features: tuple[str, ...]
    coefficients: tuple[float, ...]

    def predict(self, *, frames: int, pixels: int) -> float:
        values = _feature_values(self.features, frames=frames, pixels=pixels)
        return sum(c * v for c, v in zip(self.coefficients, values, strict=True))


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None when the system is (nearly) singular."""
    n = len(vector)
    rows = [row[:] + [value] for row, value in zip(matrix, vector, strict=True)]
    scale = max(abs(rows[i][i]) for i in range(n)) or 1.0
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        if abs(rows[pivot][col]) <= 1e-9 * scale:
            return None
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, n):
            factor = rows[r][col] / rows[col][col]
            for c in range(col, n + 1):
                rows[r][c] -= factor * rows[col][c]
    solution = [0.0] * n
    for r in range(n - 1, -1, -1):
        solution[r] = (rows[r][n] - sum(rows[r][c] * solution[c] for c in range(r + 1, n))) / rows[r][r]
    return solution


def recency_weights(count: int, half_life: float | None) -> list[float]:
    """Weights of `count` samples ordered newest first: 1 for the newest, halving every
    `half_life` samples (all 1 when half_life is None). A machine that slows down (other work on
    its cores, thermal throttling) is then followed within a few jobs, while older measurements
    still keep the fit's shape (sizes and lengths the recent jobs did not cover)."""
    if half_life is None:
        return [1.0] * count
    if half_life <= 0:
        raise ValueError("half_life must be positive")
    return [0.5 ** (age / half_life) for age in range(count)]


def _fit(
    names: tuple[str, ...], samples: Sequence[SpeedSample], weights: Sequence[float]
) -> SpeedModel | None:
    """Weighted least squares (weight × 1/y²: relative error); None if singular or any coefficient < 0."""
    if len(samples) < len(names):
        return None
    k = len(names)
    normal = [[0.0] * k for _ in range(k)]
    right = [0.0] * k
    for sample, recency in zip(samples, weights, strict=True):
        x = _feature_values(names, frames=sample.frames, pixels=sample.pixels)
        weight = recency / (sample.gpu_seconds * sample.gpu_seconds)
        for i in range(k):
            right[i] += weight * x[i] * sample.gpu_seconds
            for j in range(k):
                normal[i][j] += weight * x[i] * x[j]
    solution = _solve(normal, right)
    if solution is None or any(c < 0 for c in solution):
        return None
    return SpeedModel(features=names, coefficients=tuple(solution))


def _usable(
    samples: Sequence[SpeedSample], weights: Sequence[float]
) -> tuple[list[SpeedSample], list[float]]:
    pairs = [
        (s, w)
        for s, w in zip(samples, weights, strict=True)
        if s.gpu_seconds > 0 and s.frames >= 1 and s.pixels >= 1
    ]
    return [s for s, _ in pairs], [w for _, w in pairs]


def speed_model_fit(
    kind: str, samples: Sequence[SpeedSample], *, half_life: float | None = None
) -> SpeedModel | None:
    """The model of the first feature set that fits (see _FEATURE_SETS); None without usable
    samples. `samples` newest first, weighted by recency_weights(half_life)."""
    usable, weights = _usable(samples, recency_weights(len(samples), half_life))
    for names in _FEATURE_SETS[kind]:
        model = _fit(names, usable, weights)
        if model is not None:
            return model
    return None


def percentile(values: Sequence[Any], pct: int) -> Any:
    """Nearest-rank percentile (an actual measured value, never interpolated below one)."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, -(-pct * len(ordered) // 100))  # ceil(pct/100 × n)
    return ordered[min(rank, len(ordered)) - 1]


def weighted_percentile(values: Sequence[float], weights: Sequence[float], pct: int) -> float:
    """The smallest value with at least `pct` % of the total weight at or below it (an actual
    value, never interpolated); with equal weights, the nearest-rank percentile."""
    if not values:
        raise ValueError("no values")
    pairs = sorted(zip(values, weights, strict=True))
    needed = pct / 100 * sum(weights)
    running = 0.0
    for value, weight in pairs:
        running += weight
        if running >= needed * (1 - 1e-12):
            return value
    return pairs[-1][0]


def quote_gpu_seconds_per_frame(
    *,
    kind: str,
    samples: Sequence[SpeedSample],
    frames: int,
    pixels: int,
    pct: int,
    min_margin: float = 1.0,
    half_life: float | None = None,
) -> Decimal | None:
    """GPU seconds per frame a quote assumes for a job of `frames` frames of `pixels` pixels: the
    fitted model's prediction × the `pct` percentile of measured / predicted over the samples (at
    least `min_margin`), rounded up to GPU_SECONDS_PER_FRAME_PLACES. None when the samples fit no
    model.

    `samples` come newest first; with a `half_life` both the fit and the percentile weigh them by
    recency_weights, so when the machine slows down the quote follows within a few jobs (and the
    residuals of the slower recent jobs count most in the margin).

    `min_margin` covers the spread a few samples cannot show yet: right after warm-up a video
    model has three parts fitted to four clips, so its residuals say little about how much real
    jobs vary."""
    model = speed_model_fit(kind, samples, half_life=half_life)
    if model is None:
        return None
    usable, weights = _usable(samples, recency_weights(len(samples), half_life))
    ratios, ratio_weights = [], []
    for sample, weight in zip(usable, weights, strict=True):
        predicted = model.predict(frames=sample.frames, pixels=sample.pixels)
        if predicted > 0:
            ratios.append(sample.gpu_seconds / predicted)
            ratio_weights.append(weight)
    predicted = model.predict(frames=frames, pixels=pixels)
    if not ratios or predicted <= 0:
        return None
    seconds = predicted * max(weighted_percentile(ratios, ratio_weights, pct), min_margin) / frames
    return Decimal(repr(seconds)).quantize(GPU_SECONDS_PER_FRAME_PLACES, ROUND_CEILING)
