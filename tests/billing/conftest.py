from __future__ import annotations

import uuid
from decimal import Decimal

import pytest

from billing import services
from billing.choices import Mode, Resolution
from billing.models import PricePlan
from billing.values import Usage


@pytest.fixture
def plan(db) -> PricePlan:
    return round_number_plan()


def round_number_plan() -> PricePlan:
    """The default plan from the data migration, set to round numbers the tests can check by hand."""
    plan = PricePlan.objects.get(is_default=True)
    plan.unit_price = Decimal("0.10")
    plan.coefficient_720p = Decimal("1.00")
    plan.coefficient_1080p = Decimal("1.50")
    plan.weight_fast = Decimal("0.50")
    plan.weight_standard = Decimal("1.00")
    plan.weight_hq = Decimal("2.00")
    plan.minimum_charge = Decimal("0.05")
    plan.minor_unit_exponent = 2
    plan.currency = "USD"
    plan.save()
    return plan


@pytest.fixture
def video_quote(plan, user_a):
    """300 frames, standard, 1080p at 0.15 s/frame: 300 × 1.5 × 1.0 × 0.15 × 0.10 = 6.75 (also the hold)."""
    return services.quote_job(
        user=user_a, width=1920, height=1080, frames=300, mode=Mode.STANDARD, resolution=Resolution.P1080
    )


def usage_for(quote, *, gpu_seconds: str, wall_seconds: str = "20") -> Usage:
    return Usage(
        frames=quote.frames,
        width=quote.processed_width,
        height=quote.processed_height,
        mode=quote.mode,
        resolution=quote.resolution,
        gpu_seconds=Decimal(gpu_seconds),
        wall_seconds=Decimal(wall_seconds),
        stage_seconds={"detect": 1.5, "swap": 10.0},
    )


@pytest.fixture
def new_job_id():
    return uuid.uuid4
