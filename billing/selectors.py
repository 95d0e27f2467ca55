"""Read-only billing queries."""

from __future__ import annotations

import uuid
from decimal import ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Case, DecimalField, F, QuerySet, Sum, Value, When
from django.db.models.functions import Coalesce
from django.utils.translation import gettext as _

from billing.calibration import (
    DEFAULT_GPU_SECONDS_PER_FRAME,
    RECENCY_HALF_LIFE,
    SpeedSample,
    quote_gpu_seconds_per_frame,
)
from billing.choices import (
    BALANCE_CREDIT_KINDS,
    BALANCE_DEBIT_KINDS,
    HELD_CREDIT_KINDS,
    HELD_DEBIT_KINDS,
    EntryKind,
)
from billing.models import (
    Account,
    Charge,
    CreditPack,
    GpuCalibration,
    GpuSample,
    LedgerEntry,
    ModeRun,
    PricePlan,
)
from billing.pricing import money_text, pixel_class
from billing.values import Balance

# Which seed row of GpuCalibration stands for a pixel class until something was measured.
_SEED_RESOLUTION_FOR_CLASS = {"sd": "720p", "hd": "1080p", "uhd": "original"}

__all__ = [
    "Balance",
    "account_balance",
    "account_balance_for",
    "accounts_with_balances",
    "default_plan",
    "gpu_seconds_per_frame",
    "job_cost",
    "ledger_for_user",
    "plan_for_user",
]

# The SQL type of summed ledger amounts (here and in billing.reports).
MONEY_FIELD = DecimalField(max_digits=20, decimal_places=4)
ZERO_MONEY = Value(Decimal(0), output_field=MONEY_FIELD)


def _signed_sum(prefix: str, credit_kinds: tuple[str, ...], debit_kinds: tuple[str, ...]) -> Coalesce:
    """Σ amount over credit kinds − Σ amount over debit kinds, as one SQL aggregate."""
    return Coalesce(
        Sum(
            Case(
                When(**{f"{prefix}kind__in": credit_kinds}, then=F(f"{prefix}amount")),
                When(**{f"{prefix}kind__in": debit_kinds}, then=-F(f"{prefix}amount")),
                default=ZERO_MONEY,
                output_field=MONEY_FIELD,
            )
        ),
        ZERO_MONEY,
        output_field=MONEY_FIELD,
    )


def balance_expression(prefix: str = "") -> Coalesce:
    return _signed_sum(prefix, BALANCE_CREDIT_KINDS, BALANCE_DEBIT_KINDS)


def held_expression(prefix: str = "") -> Coalesce:
    return _signed_sum(prefix, HELD_CREDIT_KINDS, HELD_DEBIT_KINDS)


def default_plan() -> PricePlan:
    plan = PricePlan.objects.filter(is_default=True).first()
    if plan is None:
        raise ImproperlyConfigured(
            "No default PricePlan: run `manage.py migrate` (it creates one) or mark one."
        )
    return plan


def plan_for_user(*, user) -> PricePlan:
    account = Account.objects.select_related("plan").filter(user=user).first()
    if account is not None and account.plan is not None:
        return account.plan
    return default_plan()


def quantize_for_plan(amount: Decimal, plan: PricePlan, rounding: str = ROUND_HALF_EVEN) -> Decimal:
    rounded = amount.quantize(Decimal(1).scaleb(-plan.minor_unit_exponent), rounding=rounding)
    return abs(rounded) if rounded == 0 else rounded  # never "-0.00"


def account_balance_for(*, account: Account) -> Balance:
    """The account's money, derived from its ledger in one query, in whole units of its plan's
    currency, rounded down: never more than the ledger holds. The ledger can hold finer amounts (a
    balance from a plan in a currency with more decimals; manual credits before they were refused),
    and a hold or a debit checked against a figure rounded up left the account below zero."""
    totals = LedgerEntry.objects.filter(account=account).aggregate(
        balance=balance_expression(), held=held_expression()
    )
    plan = account.plan or default_plan()
    balance = quantize_for_plan(totals["balance"], plan, ROUND_FLOOR)
    available = quantize_for_plan(totals["balance"] - totals["held"], plan, ROUND_FLOOR)
    return Balance(balance=balance, held=balance - available, available=available, currency=plan.currency)


def account_balance(*, user) -> Balance:
    account = Account.objects.select_related("plan").filter(user=user).first()
    if account is None:
        plan = default_plan()
        zero = quantize_for_plan(Decimal(0), plan)
        return Balance(balance=zero, held=zero, available=zero, currency=plan.currency)
    return account_balance_for(account=account)


def accounts_with_balances() -> QuerySet[Account]:
    """Accounts annotated with balance, held and available (for the admin list)."""
    return (
        Account.objects.select_related("user", "plan")
        .annotate(balance=balance_expression("entries__"), held=held_expression("entries__"))
        .annotate(available=F("balance") - F("held"))
    )


def ledger_for_user(*, user) -> QuerySet[LedgerEntry]:
    return LedgerEntry.objects.filter(account__user=user).order_by("-created_at", "-id")


def gpu_seconds_per_frame(*, mode: str, resolution: str) -> Decimal:
    """The calibrated estimate; the seed value when no row exists."""
    row = GpuCalibration.objects.filter(mode=mode, resolution=resolution).first()
    if row is not None:
        return row.gpu_seconds_per_frame
    try:
        return DEFAULT_GPU_SECONDS_PER_FRAME[(mode, resolution)]
    except KeyError as exc:
        raise ValueError(f"unknown mode/resolution {mode!r}/{resolution!r}") from exc


def gpu_seconds_per_frame_estimate(*, mode: str, kind: str, width: int, height: int, frames: int) -> Decimal:
    """What quotes assume for `frames` frames of width × height processed pixels: the speed model
    fitted to the recent measurements of this mode and media kind (warm-up runs included), at a
    high percentile of their spread (billing.calibration), the latest measurements weighing most
    (RECENCY_HALF_LIFE); the seed calibration when nothing usable was measured yet."""
    window = settings.BILLING_QUOTE_SAMPLE_WINDOW
    pct = settings.BILLING_QUOTE_PERCENTILE
    min_margin = float(settings.BILLING_QUOTE_MIN_MARGIN)
    rows = (
        GpuSample.objects.filter(mode=mode, kind=kind, pixels__gt=0)
        .order_by("-created_at", "-id")
        .values_list("frames", "pixels", "gpu_seconds_per_frame")[:window]
    )
    samples = [
        SpeedSample(frames=sample_frames, pixels=pixels, gpu_seconds=float(per_frame) * sample_frames)
        for sample_frames, pixels, per_frame in rows
    ]
    estimate = quote_gpu_seconds_per_frame(
        kind=kind,
        samples=samples,
        frames=frames,
        pixels=width * height,
        pct=pct,
        min_margin=min_margin,
        half_life=RECENCY_HALF_LIFE,
    )
    if estimate is not None:
        return estimate
    return gpu_seconds_per_frame(
        mode=mode, resolution=_SEED_RESOLUTION_FOR_CLASS.get(pixel_class(width, height), "original")
    )


def runs_as(mode: str) -> str:
    """The mode a requested mode really runs as on this install (ModeRun.runs_as: at warm-up the GPU
    worker records the mode each requested one ran)."""
    actual = ModeRun.objects.filter(requested=mode).values_list("runs_as", flat=True).first()
    return actual or mode


def mode_runs() -> dict[str, str]:
    return dict(ModeRun.objects.values_list("requested", "runs_as"))


def gpu_cost_per_second() -> Decimal:
    """What one GPU second costs the operator (for margins in the admin), from settings."""
    return settings.BILLING_GPU_COST_PER_SECOND


def job_cost(*, job_id: uuid.UUID) -> dict[str, Any] | None:
    """What one job costs, for the job page, the API and webhooks; None when billing never saw it.

    `state`: "reserved" (the price is set aside while the job runs), "paid", "released" (nothing
    was charged) or "refunded". Amounts are strings in the currency's decimals, with `*_minor`
    integers (cents) beside them; `sentence` says it in one plain sentence.
    """
    entries = {
        entry.kind: entry for entry in LedgerEntry.objects.filter(job_id=job_id).select_related("account")
    }
    hold = entries.get(EntryKind.HOLD)
    if hold is None:
        return None
    charge = Charge.objects.filter(job_id=job_id).first()
    capture = entries.get(EntryKind.CAPTURE)
    release = entries.get(EntryKind.RELEASE)
    refund = entries.get(EntryKind.REFUND)
    quote = hold.details.get("quote", {})
    if refund is not None:
        state = "refunded"
    elif capture is not None:
        state = "paid"
    elif release is not None:
        state = "released"
    else:
        state = "reserved"
    currency = charge.currency if charge is not None else quote.get("currency", "")
    exponent = int(hold.details.get("plan", {}).get("minor_unit_exponent", 2))
    quoted = Decimal(quote.get("amount", hold.amount))

    def money(amount: Decimal | None) -> str | None:
        return None if amount is None else money_text(amount, exponent)

    def minor(amount: Decimal | None) -> int | None:
        return None if amount is None else int(amount.scaleb(exponent).to_integral_value())

    paid = capture.amount if capture is not None else None
    refunded = refund.amount if refund is not None else None
    released = release.amount if release is not None else Decimal(0)
    if state == "reserved":
        sentence = _(
            "Price: %(price)s credits, set aside while the swap runs. You pay at most this; "
            "if it fails or is canceled, nothing is charged."
        ) % {"price": money(quoted)}
    elif state == "paid":
        sentence = _("Paid %(paid)s credits (the price shown was %(price)s).") % {"paid": money(paid), "price": money(quoted)}
    elif state == "released":
        sentence = _("Nothing was charged: the %(held)s credits set aside are available again.") % {
            "held": money(hold.amount)
        }
    else:
        sentence = _("Refunded %(refunded)s credits: this swap cost you nothing.") % {"refunded": money(refunded)}
    return {
        "state": state,
        "sentence": sentence,
        "currency": currency,
        "unit": "credits",
        "minor_unit_exponent": exponent,
        "quoted": money(quoted),
        "quoted_minor": minor(quoted),
        "price": money(quoted),
        "held": money(hold.amount) if state == "reserved" else money(Decimal(0)),
        "paid": money(paid),
        "paid_minor": minor(paid),
        "charge": money(paid),  # the older name of `paid`
        "released": money(released),
        "refunded": money(refunded),
        "refunded_minor": minor(refunded),
        "capped": charge.capped if charge else None,
        "mode_charged": charge.mode if charge else quote.get("mode"),
        "mode_requested": (charge.mode_requested if charge else None) or quote.get("mode_requested"),
        "frames": charge.frames if charge else quote.get("frames"),
        "resolution_coefficient": str(charge.resolution_coefficient)
        if charge
        else quote.get("resolution_coefficient"),
        "mode_weight": str(charge.mode_weight) if charge else quote.get("mode_weight"),
        "gpu_seconds": str(charge.gpu_seconds) if charge else None,
        "gpu_seconds_estimate": quote.get("gpu_seconds_estimate"),
        "gpu_seconds_per_frame": str(charge.gpu_seconds_per_frame) if charge else None,
        "formula_amount": money(charge.computed_amount) if charge else None,
        "wall_seconds": str(charge.wall_seconds) if charge else None,
        "unit_price": str(charge.unit_price) if charge else quote.get("unit_price"),
    }


def credit_value(*, credits: Decimal) -> tuple[Decimal, str] | None:
    """What credits are worth in money at the list price (the smallest active pack), if any."""
    pack = CreditPack.objects.filter(active=True).order_by("credits", "price").first()
    if pack is None or pack.credits <= 0:
        return None
    return (credits * pack.price / pack.credits).quantize(Decimal("0.01")), pack.currency
