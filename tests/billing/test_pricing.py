"""The charge formula: hand-checked cases and properties (exact Decimal, half-up, minimum, monotone)."""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal
from fractions import Fraction
from math import floor

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.pricing import PlanPricing, charge_amount, money_text, parse_tiers, processed_size


def charge(**overrides) -> Decimal:
    values = {
        "frames": 1,
        "resolution_coefficient": Decimal("1"),
        "mode_weight": Decimal("1"),
        "gpu_seconds": Decimal("1"),
        "unit_price": Decimal("1"),
        "minimum_charge": Decimal("0"),
        "minor_unit_exponent": 2,
    }
    values.update(overrides)
    return charge_amount(**values)


# --- hand-checked -------------------------------------------------------------------------------


def test_video_charge_by_hand():
    # 300 frames × 1.5 (1080p) × 1.0 (standard) × 0.15 s/frame × 0.10 = 6.75
    assert charge(
        frames=300,
        resolution_coefficient=Decimal("1.5"),
        mode_weight=Decimal("1.0"),
        gpu_seconds=Decimal("0.15"),
        unit_price=Decimal("0.10"),
        minimum_charge=Decimal("0.05"),
    ) == Decimal("6.75")


def test_rounds_half_up_to_the_cent():
    # 1 × 1 × 1 × 0.125 × 1 = 0.125 → 0.13 (half-up; banker's rounding would give 0.12)
    assert charge(gpu_seconds=Decimal("0.125")) == Decimal("0.13")
    # 3 × 1 × 0.5 × 0.333 × 0.1 = 0.04995 → 0.05
    assert charge(
        frames=3, mode_weight=Decimal("0.5"), gpu_seconds=Decimal("0.333"), unit_price=Decimal("0.1")
    ) == Decimal("0.05")
    # 7 × 1 × 1 × 0.1 × 0.01 = 0.007 → 0.01 ; 0.0049 → 0.00
    assert charge(frames=7, gpu_seconds=Decimal("0.1"), unit_price=Decimal("0.01")) == Decimal("0.01")
    assert charge(gpu_seconds=Decimal("0.0049")) == Decimal("0.00")


def test_a_quote_rounds_up_to_the_cent():
    # 0.121 → 0.13 (a quote is a ceiling); 0.12 exactly stays 0.12; still raised to the minimum
    assert charge(gpu_seconds=Decimal("0.121"), rounding=ROUND_CEILING) == Decimal("0.13")
    assert charge(gpu_seconds=Decimal("0.12"), rounding=ROUND_CEILING) == Decimal("0.12")
    assert charge(
        gpu_seconds=Decimal("0.0001"), minimum_charge=Decimal("0.05"), rounding=ROUND_CEILING
    ) == Decimal("0.05")


def test_image_is_raised_to_the_minimum():
    # 1 frame × 1.5 × 1.0 × 0.15 × 0.10 = 0.0225 → 0.02, below the 0.05 minimum
    assert charge(
        resolution_coefficient=Decimal("1.5"),
        gpu_seconds=Decimal("0.15"),
        unit_price=Decimal("0.10"),
        minimum_charge=Decimal("0.05"),
    ) == Decimal("0.05")


def test_currency_without_minor_unit():
    # JPY: 10 × 1 × 2 × 0.25 × 3 = 15 exactly; 1 × 1 × 1 × 0.5 × 1 = 0.5 → 1 (half-up)
    assert charge(
        frames=10,
        mode_weight=Decimal(2),
        gpu_seconds=Decimal("0.25"),
        unit_price=Decimal(3),
        minor_unit_exponent=0,
    ) == Decimal("15")
    assert charge(gpu_seconds=Decimal("0.5"), minor_unit_exponent=0) == Decimal("1")


def test_minimum_finer_than_the_currency_is_rounded_up():
    assert charge(gpu_seconds=Decimal("0.001"), minimum_charge=Decimal("0.004")) == Decimal("0.01")


@pytest.mark.parametrize(
    ("amount", "exponent", "text"),
    [
        (Decimal("-0.00"), 2, "0.00"),
        (Decimal("-0.004"), 2, "0.00"),
        (Decimal("0"), 2, "0.00"),
        (Decimal("1234.5"), 2, "1234.50"),
        (Decimal("-3.456"), 2, "-3.46"),
        (Decimal("7"), 0, "7"),
    ],
)
def test_money_text_has_no_negative_zero(amount, exponent, text):
    assert money_text(amount, exponent) == text


@pytest.mark.parametrize("bad", [0.1, 1, "0.1"])
def test_floats_and_non_decimals_are_refused(bad):
    with pytest.raises(TypeError):
        charge(unit_price=bad)


def test_bad_frames_refused():
    with pytest.raises(ValueError):
        charge(frames=0)


@pytest.mark.parametrize(
    ("size", "resolution", "expected"),
    [
        ((3840, 2160), "1080p", (1920, 1080)),
        ((3840, 2160), "720p", (1280, 720)),
        ((1080, 1920), "720p", (720, 1280)),  # portrait: the shorter side is the width
        ((1000, 700), "720p", (1000, 700)),  # never up
        ((640, 480), "1080p", (640, 480)),
        ((4000, 3000), "original", (4000, 3000)),
        ((1001, 1000), "720p", (721, 720)),  # 1001 × 720 / 1000 = 720.72 → 721
        ((3000, 2001), "1080p", (1619, 1080)),  # 3000 × 1080 / 2001 = 1619.19 → 1619
    ],
)
def test_processed_size(size, resolution, expected):
    assert processed_size(*size, resolution) == expected


def test_original_coefficient_by_pixel_tier():
    pricing = PlanPricing(
        unit_price=Decimal(1),
        coefficient_720p=Decimal(1),
        coefficient_1080p=Decimal("1.5"),
        original_coefficient_tiers=parse_tiers([[921_600, "1.0"], [2_073_600, "1.5"], [None, "4"]]),
        weight_fast=Decimal("0.5"),
        weight_standard=Decimal(1),
        weight_hq=Decimal(2),
        minimum_charge=Decimal(0),
        currency="USD",
        minor_unit_exponent=2,
    )
    assert pricing.resolution_coefficient(resolution="original", width=1280, height=720) == Decimal("1.0")
    assert pricing.resolution_coefficient(resolution="original", width=1920, height=1080) == Decimal("1.5")
    assert pricing.resolution_coefficient(resolution="original", width=1921, height=1080) == Decimal("4")
    assert PlanPricing.from_dict(pricing.as_dict()) == pricing
    # A preset costs at most what its processed pixels cost as "original": 1080p on a photo that is
    # never scaled up (661 px tall) costs what the original costs.
    unscaled = {"scaled": False}
    assert pricing.resolution_coefficient(resolution="1080p", width=1000, height=661, **unscaled) == Decimal(
        "1.0"
    )
    assert pricing.resolution_coefficient(resolution="1080p", width=1000, height=661) == Decimal("1.5")
    assert pricing.resolution_coefficient(resolution="720p", width=700, height=5000, **unscaled) == Decimal(
        "1"
    )


@pytest.mark.parametrize(
    "tiers", [[], [[None, "1"], [100, "2"]], [[200, "1"], [100, "2"]], [[100, 1.5]], [[100, "x"]], "nope"]
)
def test_bad_tiers_refused(tiers):
    with pytest.raises(ValueError):
        parse_tiers(tiers)


# --- properties --------------------------------------------------------------------------------

factors = st.decimals(
    min_value=Decimal("0"), max_value=Decimal("1000"), places=4, allow_nan=False, allow_infinity=False
)
frames_st = st.integers(min_value=1, max_value=1_000_000)
exponents = st.integers(min_value=0, max_value=4)


def exact_half_up(value: Fraction, exponent: int) -> Fraction:
    scale = 10**exponent
    return Fraction(floor(value * scale + Fraction(1, 2)), scale)


@given(frames=frames_st, c=factors, w=factors, s=factors, p=factors, m=factors, e=exponents)
def test_equals_the_exact_rational_product_rounded_half_up(frames, c, w, s, p, m, e):
    result = charge_amount(
        frames=frames,
        resolution_coefficient=c,
        mode_weight=w,
        gpu_seconds=s,
        unit_price=p,
        minimum_charge=m,
        minor_unit_exponent=e,
    )
    assert isinstance(result, Decimal)
    assert result.as_tuple().exponent == -e  # exactly the minor unit
    exact = Fraction(frames) * Fraction(c) * Fraction(w) * Fraction(s) * Fraction(p)
    minimum = Fraction(m)
    scale = 10**e
    minimum_up = Fraction(-((-minimum.numerator * scale) // minimum.denominator), scale)  # ceil
    assert Fraction(result) == max(exact_half_up(exact, e), minimum_up)
    assert result >= m
    if Fraction(result) != minimum_up:  # not raised to the minimum: within half a minor unit
        assert abs(Fraction(result) - exact) <= Fraction(1, 2 * scale)


@given(
    frames=frames_st,
    c=factors,
    w=factors,
    s=factors,
    p=factors,
    m=factors,
    e=exponents,
    which=st.sampled_from(
        ["frames", "resolution_coefficient", "mode_weight", "gpu_seconds", "unit_price", "minimum_charge"]
    ),
    bump=factors,
)
def test_monotone_in_every_factor(frames, c, w, s, p, m, e, which, bump):
    args = {
        "frames": frames,
        "resolution_coefficient": c,
        "mode_weight": w,
        "gpu_seconds": s,
        "unit_price": p,
        "minimum_charge": m,
        "minor_unit_exponent": e,
    }
    before = charge_amount(**args)
    args[which] = args[which] + (int(bump) + 1 if which == "frames" else bump)
    assert charge_amount(**args) >= before


@given(
    width=st.integers(1, 20_000),
    height=st.integers(1, 20_000),
    resolution=st.sampled_from(["720p", "1080p", "original"]),
)
def test_processed_size_only_scales_down_keeping_aspect(width, height, resolution):
    new_width, new_height = processed_size(width, height, resolution)
    assert new_width <= width and new_height <= height
    target = {"720p": 720, "1080p": 1080, "original": None}[resolution]
    if target is None or min(width, height) <= target:
        assert (new_width, new_height) == (width, height)
    else:
        assert min(new_width, new_height) == target
        longer, new_longer = max(width, height), max(new_width, new_height)
        assert abs(Fraction(new_longer) - Fraction(longer * target, min(width, height))) <= Fraction(1, 2)
