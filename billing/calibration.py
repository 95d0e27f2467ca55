"""Seed values for GPU-time calibration (seconds per frame), used until measured jobs refine them."""

from __future__ import annotations

from decimal import Decimal

from billing.choices import Mode, Resolution

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
