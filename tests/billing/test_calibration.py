"""The speed model quotes use (billing.calibration): pure logic on synthetic samples."""

from __future__ import annotations

import random
from decimal import Decimal
from functools import partial

import pytest

from billing.calibration import (
    SpeedSample,
    percentile,
    quote_gpu_seconds_per_frame,
    recency_weights,
    speed_model_fit,
    weighted_percentile,
)


def video_seconds(frames: int, width: int, height: int) -> float:
    """A made-up worker: 0.2 s per job (the source photo), 3 ms per frame, 50 ms per megapixel-frame."""
    return 0.2 + frames * (0.003 + 0.05 * width * height / 1e6)


WARM_UP_CLIPS = [(320, 180, 6), (320, 180, 24), (640, 360, 12), (1280, 720, 6)]


def clip_samples(clips=WARM_UP_CLIPS) -> list[SpeedSample]:
    return [SpeedSample(frames, w * h, video_seconds(frames, w, h)) for w, h, frames in clips]


def test_percentile_is_nearest_rank():
    values = [Decimal(v) for v in ("0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0")]
    assert percentile(values, 90) == Decimal("0.9")
    assert percentile(values, 50) == Decimal("0.5")
    assert percentile(values[:1], 90) == Decimal("0.1")


def test_the_warm_up_clips_predict_a_short_small_clip_and_a_long_large_one():
    # A per-frame figure from one 12-frame 640×360 clip (the old warm-up) says 0.034 s/frame: a
    # 1 s 192×192 clip would be quoted 3× what it costs, a 10 s 1080p one 3× too little.
    for width, height, frames in [(192, 192, 8), (1920, 1080, 240)]:
        truth = video_seconds(frames, width, height)
        per_frame = quote_gpu_seconds_per_frame(
            kind="video", samples=clip_samples(), frames=frames, pixels=width * height, pct=90
        )
        assert per_frame * frames == pytest.approx(Decimal(repr(truth)), rel=Decimal("0.0001"))
        assert per_frame * frames >= Decimal(repr(truth))  # rounded up, never down


def test_photo_time_that_grows_with_size_is_quoted_by_size():
    samples = [
        SpeedSample(1, w * h, 0.25 + 0.1 * w * h / 1e6) for w, h in [(640, 480), (1280, 720), (3840, 2160)]
    ]
    small = quote_gpu_seconds_per_frame(kind="image", samples=samples, frames=1, pixels=460 * 430, pct=90)
    large = quote_gpu_seconds_per_frame(kind="image", samples=samples, frames=1, pixels=3000 * 2000, pct=90)
    # 0.25 + 0.1 × megapixels, rounded up to the microsecond (float noise may add one)
    assert Decimal("0.269780") <= small <= Decimal("0.269781")
    assert Decimal("0.850000") <= large <= Decimal("0.850001")


def test_a_model_never_has_a_negative_part():
    # Larger photos measured faster (detection runs on a copy capped in size): no negative
    # per-megapixel cost that would quote a large photo at nothing; a constant time instead.
    samples = [
        SpeedSample(1, 640 * 480, 0.6),
        SpeedSample(1, 1920 * 1080, 0.5),
        SpeedSample(1, 3840 * 2160, 0.4),
    ]
    model = speed_model_fit("image", samples)
    assert model.features == ("job",) and model.coefficients[0] > 0
    huge = quote_gpu_seconds_per_frame(kind="image", samples=samples, frames=1, pixels=8000 * 8000, pct=100)
    assert Decimal("0.600000") <= huge <= Decimal("0.600001")  # the slowest measured, relative to the model


def test_the_quote_covers_the_spread_of_the_measurements():
    rng = random.Random(14)
    clips = [
        (rng.choice([192, 640, 1280]), rng.choice([192, 360, 720]), rng.randint(6, 300)) for _ in range(200)
    ]
    samples = [
        SpeedSample(frames, w * h, video_seconds(frames, w, h) * rng.uniform(0.8, 1.3))
        for w, h, frames in clips
    ]
    covered = 0
    for w, h, frames in clips:
        per_frame = quote_gpu_seconds_per_frame(
            kind="video", samples=samples, frames=frames, pixels=w * h, pct=90
        )
        quoted = float(per_frame) * frames
        truth = video_seconds(frames, w, h)
        assert truth < quoted < 2 * truth * 0.8  # above the typical run, within 2× of the fastest
        covered += sum(
            s.gpu_seconds <= quoted for s in samples if (s.frames, s.pixels) == (frames, w * h)
        ) / sum((s.frames, s.pixels) == (frames, w * h) for s in samples)
    assert covered / len(clips) >= 0.85


def test_a_minimum_margin_above_the_model_when_the_samples_show_less_spread():
    exact = quote_gpu_seconds_per_frame(
        kind="video", samples=clip_samples(), frames=8, pixels=192 * 192, pct=90
    )
    with_margin = quote_gpu_seconds_per_frame(
        kind="video", samples=clip_samples(), frames=8, pixels=192 * 192, pct=90, min_margin=1.2
    )
    assert with_margin == pytest.approx(exact * Decimal("1.2"), abs=Decimal("0.000002"))


def test_nothing_usable_measured_gives_no_estimate():
    assert quote_gpu_seconds_per_frame(kind="image", samples=[], frames=1, pixels=1000, pct=90) is None
    legacy = [SpeedSample(1, 0, 0.5)]  # recorded before sizes were kept
    assert quote_gpu_seconds_per_frame(kind="image", samples=legacy, frames=1, pixels=1000, pct=90) is None


def test_recency_weights_halve_every_half_life():
    weights = recency_weights(11, 5)
    assert weights[0] == 1.0 and weights[5] == pytest.approx(0.5) and weights[10] == pytest.approx(0.25)
    assert all(a > b for a, b in zip(weights, weights[1:], strict=False))
    assert recency_weights(3, None) == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError):
        recency_weights(3, 0)


def test_weighted_percentile_with_equal_weights_is_the_nearest_rank():
    rng = random.Random(7)
    for count in (1, 2, 9, 10, 37):
        values = [rng.uniform(0.5, 2.0) for _ in range(count)]
        for pct in (10, 50, 90, 95, 100):
            assert weighted_percentile(values, [1.0] * count, pct) == percentile(values, pct)


def test_weighted_percentile_follows_the_weight():
    assert weighted_percentile([1.0, 2.0, 3.0], [0.1, 0.1, 10.0], 50) == 3.0
    assert weighted_percentile([1.0, 2.0, 3.0], [10.0, 0.1, 0.1], 90) == 1.0


PHOTO_SIZES = [(640, 480), (1280, 720), (1920, 1080)]


def slowed_down_samples() -> list[SpeedSample]:
    """40 photos at 0.40-0.44 s, then the machine slows down 2× for the last 3 (newest first)."""

    def photo(i: int, scale: float) -> SpeedSample:
        width, height = PHOTO_SIZES[i % 3]
        return SpeedSample(1, width * height, scale * (0.4 + 0.02 * (i % 3)))

    return list(reversed([photo(i, 1.0) for i in range(40)] + [photo(i, 2.0) for i in range(3)]))


@pytest.mark.parametrize("size", PHOTO_SIZES)
def test_a_machine_that_slows_down_is_followed_within_a_few_jobs(size):
    width, height = size
    slow = 2.0 * (0.4 + 0.02 * PHOTO_SIZES.index(size))  # what this size took in the latest jobs
    quote = partial(
        quote_gpu_seconds_per_frame,
        kind="image",
        samples=slowed_down_samples(),
        frames=1,
        pixels=width * height,
        pct=90,
        min_margin=1.2,
    )
    recent = float(quote(half_life=5))
    assert slow <= recent < 2 * slow  # covers the slower jobs, and stays within 2× of them
    assert float(quote(half_life=None)) < slow  # equal weights: 40 old jobs outvote 3 new ones
