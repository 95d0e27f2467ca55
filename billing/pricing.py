"""Pure pricing arithmetic (no database): processed sizes, resolution coefficients, the charge formula.

charge = frames × resolution coefficient × mode weight × GPU seconds per frame × unit price

`gpu_seconds` in the formula is GPU seconds *per frame*: frames × seconds-per-frame is the job's GPU
time, so a video is billed linearly in its length (with total seconds the price would grow with the
square of the frame count). The worker meters GPU seconds in swap.inference.clock: the wall time of
model calls on a GPU, the CPU time they consumed on a CPU build (so the machine's load is not billed). The product is computed exactly in Decimal, then rounded ROUND_HALF_UP to
the currency's minor unit (a quote rounds up: it is a ceiling) and raised to the minimum charge.

The quote is a promise: what a job pays is min(this formula on the measured work, the quote), and
the hold is the quote itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal, Inexact, localcontext
from typing import Any

from billing.choices import Mode, PixelClass, Resolution

RESOLUTION_SHORT_SIDE_PX: dict[str, int | None] = {
    Resolution.P720: 720,
    Resolution.P1080: 1080,
    Resolution.ORIGINAL: None,
}

# Enough digits for frames (≤ 10 digits) times four factors of ≤ 20 digits each, so the product is
# always exact; Inexact is trapped to prove it.
_EXACT_PRECISION = 120


def minor_unit(minor_unit_exponent: int) -> Decimal:
    """Decimal("0.01") for exponent 2, Decimal("1") for exponent 0."""
    if minor_unit_exponent < 0:
        raise ValueError("minor_unit_exponent must be >= 0")
    return Decimal(1).scaleb(-minor_unit_exponent)


def round_money(amount: Decimal, minor_unit_exponent: int, rounding: str = ROUND_HALF_UP) -> Decimal:
    """ROUND_HALF_UP (or `rounding`) to the currency's minor unit."""
    with localcontext() as ctx:
        ctx.prec = _EXACT_PRECISION
        return amount.quantize(minor_unit(minor_unit_exponent), rounding=rounding)


def processed_size(width: int, height: int, resolution: str) -> tuple[int, int]:
    """Scale down so the shorter side is at most 720/1080 px (never up; "original" is unchanged).

    The longer side is rounded half-up; the aspect ratio is kept as closely as integers allow.
    """
    if width <= 0 or height <= 0:
        raise ValueError("width and height must be positive")
    if resolution not in RESOLUTION_SHORT_SIDE_PX:
        raise ValueError(f"unknown resolution {resolution!r}")
    target_px = RESOLUTION_SHORT_SIDE_PX[resolution]
    shorter_px = min(width, height)
    if target_px is None or shorter_px <= target_px:
        return width, height

    def scale(side_px: int) -> int:
        # round(side × target / shorter) half-up, in integers.
        return max(1, (2 * side_px * target_px + shorter_px) // (2 * shorter_px))

    if width <= height:
        return target_px, scale(height)
    return scale(width), target_px


def _require_decimal(**values: Any) -> None:
    for name, value in values.items():
        if not isinstance(value, Decimal):
            raise TypeError(f"{name} must be a Decimal (money is never a float), got {type(value).__name__}")
        if not value.is_finite():
            raise ValueError(f"{name} must be finite")
        if value < 0:
            raise ValueError(f"{name} must not be negative")


def charge_amount(
    *,
    frames: int,
    resolution_coefficient: Decimal,
    mode_weight: Decimal,
    gpu_seconds: Decimal,
    unit_price: Decimal,
    minimum_charge: Decimal,
    minor_unit_exponent: int,
    rounding: str = ROUND_HALF_UP,
) -> Decimal:
    """frames × coefficient × weight × GPU seconds per frame × unit price, half-up (or `rounding`: a
    quote rounds up), at least the minimum.

    A minimum with more decimals than the currency has is rounded up to the minor unit, so the
    result is never below it.
    """
    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
        raise ValueError("frames must be a positive integer")
    _require_decimal(
        resolution_coefficient=resolution_coefficient,
        mode_weight=mode_weight,
        gpu_seconds=gpu_seconds,
        unit_price=unit_price,
        minimum_charge=minimum_charge,
    )
    with localcontext() as ctx:
        ctx.prec = _EXACT_PRECISION
        ctx.traps[Inexact] = True
        exact = Decimal(frames) * resolution_coefficient * mode_weight * gpu_seconds * unit_price
    rounded = round_money(exact, minor_unit_exponent, rounding)
    with localcontext() as ctx:
        ctx.prec = _EXACT_PRECISION
        minimum = minimum_charge.quantize(minor_unit(minor_unit_exponent), rounding=ROUND_CEILING)
    return max(rounded, minimum)


def pixel_class(width: int, height: int) -> str:
    """The calibration class of a processed size, by pixel count (whatever preset was asked)."""
    pixels = width * height
    if pixels <= 1280 * 720:
        return PixelClass.SD
    if pixels <= 1920 * 1080:
        return PixelClass.HD
    return PixelClass.UHD


def money_text(amount: Decimal, minor_unit_exponent: int = 2) -> str:
    """An amount as the pages show it: the currency's decimals, never "-0.00"."""
    rounded = round_money(amount, minor_unit_exponent)
    if rounded == 0:
        rounded = abs(rounded)
    return f"{rounded:.{minor_unit_exponent}f}"


def no_negative_zero(amount: Decimal) -> Decimal:
    return abs(amount) if amount == 0 else amount


@dataclass(frozen=True)
class PlanPricing:
    """The numbers of a PricePlan, detached from the database (snapshotted on every hold)."""

    unit_price: Decimal
    coefficient_720p: Decimal
    coefficient_1080p: Decimal
    # [(max_pixels or None for "any size", coefficient)], ascending by max_pixels.
    original_coefficient_tiers: Sequence[tuple[int | None, Decimal]]
    weight_fast: Decimal
    weight_standard: Decimal
    weight_hq: Decimal
    minimum_charge: Decimal
    currency: str
    minor_unit_exponent: int
    extra: Mapping[str, Any] = field(default_factory=dict)

    def resolution_coefficient(
        self, *, resolution: str, width: int, height: int, scaled: bool = True
    ) -> Decimal:
        """Coefficient for a *processed* size. A preset that scaled the target down costs the
        preset's coefficient; a preset at or above the target's own size (nothing is scaled, never
        up) costs at most what the original costs. "original" is priced by pixel tier."""
        by_pixels = original_coefficient(self.original_coefficient_tiers, width * height)
        if resolution == Resolution.ORIGINAL:
            return by_pixels
        if resolution == Resolution.P720:
            preset = self.coefficient_720p
        elif resolution == Resolution.P1080:
            preset = self.coefficient_1080p
        else:
            raise ValueError(f"unknown resolution {resolution!r}")
        return preset if scaled else min(preset, by_pixels)

    def mode_weight(self, mode: str) -> Decimal:
        weights = {Mode.FAST: self.weight_fast, Mode.STANDARD: self.weight_standard, Mode.HQ: self.weight_hq}
        if mode not in weights:
            raise ValueError(f"unknown mode {mode!r}")
        return weights[mode]

    def as_dict(self) -> dict[str, Any]:
        return {
            "unit_price": str(self.unit_price),
            "coefficient_720p": str(self.coefficient_720p),
            "coefficient_1080p": str(self.coefficient_1080p),
            "original_coefficient_tiers": [
                [max_px, str(coefficient)] for max_px, coefficient in self.original_coefficient_tiers
            ],
            "weight_fast": str(self.weight_fast),
            "weight_standard": str(self.weight_standard),
            "weight_hq": str(self.weight_hq),
            "minimum_charge": str(self.minimum_charge),
            "currency": self.currency,
            "minor_unit_exponent": self.minor_unit_exponent,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanPricing:
        return cls(
            unit_price=Decimal(data["unit_price"]),
            coefficient_720p=Decimal(data["coefficient_720p"]),
            coefficient_1080p=Decimal(data["coefficient_1080p"]),
            original_coefficient_tiers=parse_tiers(data["original_coefficient_tiers"]),
            weight_fast=Decimal(data["weight_fast"]),
            weight_standard=Decimal(data["weight_standard"]),
            weight_hq=Decimal(data["weight_hq"]),
            minimum_charge=Decimal(data["minimum_charge"]),
            currency=data["currency"],
            minor_unit_exponent=int(data["minor_unit_exponent"]),
        )


def parse_tiers(raw: Any) -> list[tuple[int | None, Decimal]]:
    """Validate a JSON tier list [[max_pixels|null, "coefficient"], ...] (ascending; null last)."""
    if not isinstance(raw, list) or not raw:
        raise ValueError("tiers must be a non-empty list of [max_pixels, coefficient]")
    tiers: list[tuple[int | None, Decimal]] = []
    previous_max_px = 0
    for index, item in enumerate(raw):
        if not isinstance(item, list | tuple) or len(item) != 2:
            raise ValueError(f"tier {index} must be [max_pixels, coefficient]")
        max_px, coefficient_raw = item
        if isinstance(coefficient_raw, float):
            raise ValueError(f'tier {index}: write the coefficient as a string, e.g. "1.5"')
        try:
            coefficient = Decimal(str(coefficient_raw))
        except ArithmeticError as exc:
            raise ValueError(f"tier {index}: coefficient {coefficient_raw!r} is not a number") from exc
        if not coefficient.is_finite() or coefficient < 0:
            raise ValueError(f"tier {index}: coefficient must be a non-negative number")
        if max_px is None:
            if index != len(raw) - 1:
                raise ValueError("only the last tier may have no pixel limit (null)")
        elif isinstance(max_px, bool) or not isinstance(max_px, int) or max_px <= previous_max_px:
            raise ValueError("tier pixel limits must be positive integers in ascending order")
        else:
            previous_max_px = max_px
        tiers.append((max_px, coefficient))
    return tiers


def original_coefficient(tiers: Sequence[tuple[int | None, Decimal]], pixels: int) -> Decimal:
    """The first tier whose limit holds the pixel count; beyond every limit, the last tier."""
    for max_px, coefficient in tiers:
        if max_px is None or pixels <= max_px:
            return coefficient
    return tiers[-1][1]
