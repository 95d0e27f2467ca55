"""The quote is a promise: the hold is the quote, the charge is min(formula, quote), the
quote comes from the speed model fitted to the measured GPU time per mode and media kind, and a
mode that runs as a cheaper one is priced as that one."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing import selectors, services
from billing.choices import MediaKind, Mode, Resolution, SampleOrigin
from billing.values import Usage

pytestmark = pytest.mark.django_db


def record(mode, kind, width, height, *values, frames=1, origin=SampleOrigin.JOB):
    for value in values:
        services.gpu_sample_record(
            mode=mode,
            kind=kind,
            width=width,
            height=height,
            gpu_seconds_per_frame=Decimal(value),
            frames=frames,
            origin=origin,
        )



def run_and_capture(user, *, width, height, frames, mode, resolution, gpu_seconds, mode_ran=None):
    """Quote, hold and capture one job the way the worker does; returns the Charge."""
    quote = services.quote_job(user=user, width=width, height=height, frames=frames, mode=mode, resolution=resolution)
    job_id = uuid.uuid4()
    services.hold_place(user=user, job_id=job_id, quote=quote)
    return services.hold_capture(
        job_id=job_id,
        usage=Usage(
            frames=frames, width=width, height=height, mode=mode_ran or mode, resolution=resolution,
            gpu_seconds=Decimal(gpu_seconds), wall_seconds=Decimal(1), mode_requested=mode,
        ),
    )


def test_quote_uses_the_speed_model_of_the_mode_and_kind(plan, user_a):
    # Seed (nothing measured): standard 720p is 0.100 s/frame → 1 × 1 × 1 × 0.1 × 0.10 = 0.01 → minimum 0.05
    record(Mode.STANDARD, MediaKind.IMAGE, 640, 480, "1.0", "1.0", "1.0")
    record(Mode.STANDARD, MediaKind.IMAGE, 3840, 2160, "3.0", "3.0", "3.0")
    record(Mode.FAST, MediaKind.IMAGE, 1280, 720, "9.0")  # another mode
    record(Mode.STANDARD, MediaKind.VIDEO, 1280, 720, "0.05", frames=24)  # videos are calibrated apart
    quote = services.quote_job(
        user=user_a, width=1280, height=720, frames=1, mode="standard", resolution="720p"
    )
    # On the line through (0.3072 MP, 1 s) and (8.2944 MP, 3 s): 1.153846 s at 0.9216 MP (1280×720),
    # × the minimum margin 1.2 (the measurements fit the line exactly: no spread to add)
    assert Decimal("1.384615") <= quote.gpu_seconds_per_frame_estimate <= Decimal("1.384616")
    assert quote.amount == Decimal("0.14")  # 1 × 1.00 × 1.00 × 1.384615 × 0.10
    assert quote.hold_amount == quote.amount
    video = services.quote_job(
        user=user_a, width=1280, height=720, frames=24, mode="standard", resolution="720p"
    )
    assert video.kind == "video"
    assert Decimal("0.06") <= video.gpu_seconds_per_frame_estimate <= Decimal("0.060001")  # 0.05 × 1.2
    assert video.amount == Decimal("0.15")  # 24 × 1 × 1 × 0.06 × 0.10 = 0.144, rounded up (a ceiling)


def test_warm_up_samples_seed_a_fresh_install(plan, user_a):
    record(Mode.FAST, MediaKind.IMAGE, 1280, 720, "0.8", origin=SampleOrigin.WARMUP)
    quote = services.quote_job(user=user_a, width=1000, height=700, frames=1, mode="fast", resolution="720p")
    assert Decimal("0.96") <= quote.gpu_seconds_per_frame_estimate <= Decimal("0.960001")  # 0.8 × 1.2


def test_a_mode_that_runs_as_a_cheaper_one_is_priced_as_that_one(plan, user_a, funded_user):
    services.mode_runs_record(runs_as={"hq": "standard"}, notes={"hq": "no face enhancer is installed"})
    quote = services.quote_job(
        user=user_a, width=1920, height=1080, frames=300, mode="hq", resolution="1080p"
    )
    assert (quote.mode, quote.mode_requested) == ("standard", "hq")
    assert quote.mode_weight == plan.weight_standard
    standard = services.quote_job(
        user=user_a, width=1920, height=1080, frames=300, mode="standard", resolution="1080p"
    )
    assert quote.amount == standard.amount


def test_the_quote_rounds_up_so_its_own_estimate_is_not_capped(plan, funded_user):
    record(Mode.HQ, MediaKind.IMAGE, 1280, 720, "0.4642", origin=SampleOrigin.WARMUP)
    quote = services.quote_job(user=funded_user, width=1280, height=720, frames=1, mode="hq", resolution="720p")
    # 0.4642 × 1.2 = 0.55704 s × 2.0 (hq) × 0.10 = 0.111408: rounded up, not half-up to 0.11
    assert quote.gpu_seconds_estimate == Decimal("0.557")
    assert quote.amount == Decimal("0.12")
    # 4 % more GPU time than estimated: 0.116, charged half-up 0.12, which a quote of 0.11 would cap
    charge = run_and_capture(funded_user, width=1280, height=720, frames=1, mode="hq", resolution="720p",
                             gpu_seconds="0.58")
    assert (charge.quoted_amount, charge.amount, charge.capped) == (Decimal("0.12"), Decimal("0.12"), False)


def test_charge_uses_the_weight_of_the_mode_that_ran(plan, funded_user):
    charge = run_and_capture(funded_user, width=1920, height=1080, frames=300, mode="hq", resolution="1080p",
                             gpu_seconds="30", mode_ran="standard")
    assert charge.mode == "standard" and charge.mode_requested == "hq"
    assert charge.mode_weight == plan.weight_standard
    assert charge.amount == Decimal("4.50")  # 300 × 1.5 × 1.0 × 0.1 × 0.10, not × 2.0 for hq


def test_capture_records_a_sample_for_future_quotes(plan, funded_user):
    run_and_capture(funded_user, width=640, height=480, frames=1, mode="fast", resolution="720p", gpu_seconds="0.42")
    estimate = selectors.gpu_seconds_per_frame_estimate(mode="fast", kind="image", width=640, height=480, frames=1)
    assert Decimal("0.504") <= estimate <= Decimal("0.504001")  # 0.42 × the minimum margin 1.2


def test_balance_never_shows_negative_zero(plan, funded_user):
    quote = services.quote_job(
        user=funded_user, width=640, height=480, frames=1, mode="fast", resolution="720p"
    )
    job_id = uuid.uuid4()
    services.hold_place(user=funded_user, job_id=job_id, quote=quote)
    services.hold_release(job_id=job_id, reason="canceled")
    held = selectors.account_balance(user=funded_user).held
    assert str(held) == "0.00"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    frames=st.integers(1, 600),
    resolution=st.sampled_from(Resolution.values),
    mode=st.sampled_from(Mode.values),
    measured=st.decimals(min_value=Decimal("0"), max_value=Decimal("5"), places=3),
    side=st.integers(64, 4000),
)
def test_charge_is_never_above_the_quote(plan, funded_user, frames, resolution, mode, measured, side):
    quote = services.quote_job(
        user=funded_user,
        width=side,
        height=side * 3 // 4 or 1,
        frames=frames,
        mode=mode,
        resolution=resolution,
    )
    job_id = uuid.uuid4()
    services.account_top_up(user=funded_user, amount=quote.amount, actor=None, reason="this example")
    services.hold_place(user=funded_user, job_id=job_id, quote=quote)
    charge = services.hold_capture(
        job_id=job_id,
        usage=Usage(
            frames=frames,
            width=quote.processed_width,
            height=quote.processed_height,
            mode=quote.mode,
            resolution=resolution,
            gpu_seconds=measured * frames,
            wall_seconds=Decimal(1),
        ),
    )
    assert charge.amount <= quote.amount
    assert charge.amount == min(charge.computed_amount, quote.amount)
    assert charge.capped == (charge.computed_amount > quote.amount)


def test_capped_charges_are_counted_for_alerting(plan, funded_user, client):
    from prometheus_client import CollectorRegistry, generate_latest

    from billing import metrics

    for measured in ("30", "90"):  # 4.50 (under the 6.75 quote), then 13.50 → capped at 6.75
        run_and_capture(funded_user, width=1920, height=1080, frames=300, mode="standard", resolution="1080p",
                        gpu_seconds=measured)
    registry = CollectorRegistry()
    metrics.add_to(registry)
    text = generate_latest(registry).decode()
    assert 'visage_billing_charges_last_hour{capped="true"} 1.0' in text
    assert "visage_billing_capped_ratio_last_hour 0.5" in text


def test_charge_admin_shows_quote_formula_and_margin(plan, funded_user, admin_client):
    run_and_capture(funded_user, width=1920, height=1080, frames=300, mode="standard", resolution="1080p",
                    gpu_seconds="36")
    html = admin_client.get("/admin/billing/charge/").content.decode()
    assert "Margin" in html and "5.3820" in html  # 5.40 paid − 36 s × 0.0005
