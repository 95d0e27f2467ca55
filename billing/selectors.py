"""Read-only billing queries."""

from __future__ import annotations

import calendar
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db.models import Case, Count, DecimalField, F, Q, QuerySet, Sum, Value, When
from django.db.models.functions import Coalesce, TruncMonth

from billing.calibration import DEFAULT_GPU_SECONDS_PER_FRAME
from billing.choices import (
    BALANCE_CREDIT_KINDS,
    BALANCE_DEBIT_KINDS,
    HELD_CREDIT_KINDS,
    HELD_DEBIT_KINDS,
    EntryKind,
)
from billing.models import Account, Charge, GpuCalibration, LedgerEntry, PricePlan
from billing.values import Balance

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
    "usage_report",
]

_MONEY = DecimalField(max_digits=20, decimal_places=4)
_ZERO = Value(Decimal(0), output_field=_MONEY)


def _signed_sum(prefix: str, credit_kinds: tuple[str, ...], debit_kinds: tuple[str, ...]) -> Coalesce:
    """Σ amount over credit kinds − Σ amount over debit kinds, as one SQL aggregate."""
    return Coalesce(
        Sum(
            Case(
                When(**{f"{prefix}kind__in": credit_kinds}, then=F(f"{prefix}amount")),
                When(**{f"{prefix}kind__in": debit_kinds}, then=-F(f"{prefix}amount")),
                default=_ZERO,
                output_field=_MONEY,
            )
        ),
        _ZERO,
        output_field=_MONEY,
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


def _quantize(amount: Decimal, plan: PricePlan) -> Decimal:
    return amount.quantize(Decimal(1).scaleb(-plan.minor_unit_exponent))


def account_balance_for(*, account: Account) -> Balance:
    """The account's money, derived from its ledger in one query."""
    totals = LedgerEntry.objects.filter(account=account).aggregate(
        balance=balance_expression(), held=held_expression()
    )
    plan = account.plan or default_plan()
    balance = _quantize(totals["balance"], plan)
    held = _quantize(totals["held"], plan)
    return Balance(balance=balance, held=held, available=balance - held, currency=plan.currency)


def account_balance(*, user) -> Balance:
    account = Account.objects.select_related("plan").filter(user=user).first()
    if account is None:
        plan = default_plan()
        zero = _quantize(Decimal(0), plan)
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


def job_cost(*, job_id: uuid.UUID) -> dict[str, Any] | None:
    """The cost breakdown of one job for the job page and API; None when billing never saw the job."""
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
        state = "captured"
    elif release is not None:
        state = "released"
    else:
        state = "held"
    currency = charge.currency if charge is not None else quote.get("currency", "")
    exponent = int(hold.details.get("plan", {}).get("minor_unit_exponent", 2))

    def money(amount: Decimal | None) -> str | None:
        return None if amount is None else str(amount.quantize(Decimal(1).scaleb(-exponent)))

    return {
        "state": state,
        "currency": currency,
        "quoted": quote.get("amount"),
        "held": money(hold.amount),
        "charge": money(capture.amount) if capture is not None else None,
        "released": money(release.amount) if release is not None else money(Decimal(0)),
        "refunded": money(refund.amount) if refund is not None else None,
        "frames": charge.frames if charge else quote.get("frames"),
        "resolution_coefficient": str(charge.resolution_coefficient)
        if charge
        else quote.get("resolution_coefficient"),
        "mode_weight": str(charge.mode_weight) if charge else quote.get("mode_weight"),
        "gpu_seconds": str(charge.gpu_seconds) if charge else None,
        "gpu_seconds_estimate": quote.get("gpu_seconds_estimate"),
        "gpu_seconds_per_frame": str(charge.gpu_seconds_per_frame) if charge else None,
        "wall_seconds": str(charge.wall_seconds) if charge else None,
        "unit_price": str(charge.unit_price) if charge else quote.get("unit_price"),
    }


@dataclass(frozen=True)
class UsageRow:
    month: date
    user_id: int
    username: str
    currency: str
    jobs: int
    frames: int
    gpu_seconds: Decimal
    charged: Decimal
    refunded: Decimal
    net: Decimal


def month_bounds(month: date) -> tuple[datetime, datetime]:
    """[first instant of the month, first instant of the next month) in UTC."""
    start = datetime(month.year, month.month, 1, tzinfo=UTC)
    days = calendar.monthrange(month.year, month.month)[1]
    end = start + timedelta(days=days)
    return start, end


def usage_report(*, month: date | None = None, user=None) -> list[UsageRow]:
    """Per user and calendar month (UTC): jobs charged, frames, GPU seconds, charged, refunded, net.

    A charge counts in the month it was captured, a refund in the month it was made.
    """
    entries = LedgerEntry.objects.filter(kind__in=[EntryKind.CAPTURE, EntryKind.REFUND])
    if month is not None:
        start, end = month_bounds(month)
        entries = entries.filter(created_at__gte=start, created_at__lt=end)
    if user is not None:
        entries = entries.filter(account__user=user)
    captures = Q(kind=EntryKind.CAPTURE)
    rows = (
        entries.annotate(month=TruncMonth("created_at", tzinfo=UTC))
        .values("month", "account__user_id", "account__user__username", "account__plan_id")
        .annotate(
            jobs=Count("id", filter=captures),
            frames=Coalesce(Sum("charge__frames", filter=captures), 0),
            gpu_seconds=Coalesce(Sum("charge__gpu_seconds", filter=captures), _ZERO, output_field=_MONEY),
            charged=Coalesce(Sum("amount", filter=captures), _ZERO, output_field=_MONEY),
            refunded=Coalesce(Sum("amount", filter=Q(kind=EntryKind.REFUND)), _ZERO, output_field=_MONEY),
        )
        .order_by("month", "account__user__username")
    )
    plans = {plan.id: plan for plan in PricePlan.objects.all()}
    fallback = default_plan()
    report = []
    for row in rows:
        plan = plans.get(row["account__plan_id"], fallback)
        report.append(
            UsageRow(
                month=_as_date(row["month"]),
                user_id=row["account__user_id"],
                username=row["account__user__username"],
                currency=plan.currency,
                jobs=row["jobs"],
                frames=row["frames"],
                gpu_seconds=row["gpu_seconds"].quantize(Decimal("0.001")),
                charged=_quantize(row["charged"], plan),
                refunded=_quantize(row["refunded"], plan),
                net=_quantize(row["charged"] - row["refunded"], plan),
            )
        )
    return report


def _as_date(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value
