"""Read-only billing queries."""

from __future__ import annotations

import calendar
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Case, Count, DecimalField, F, Min, Q, QuerySet, Sum, Value, When
from django.db.models.functions import Coalesce, TruncMonth

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
    rounded = amount.quantize(Decimal(1).scaleb(-plan.minor_unit_exponent))
    return abs(rounded) if rounded == 0 else rounded  # never "-0.00"


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


def mode_runs_as(mode: str) -> str:
    """The mode a requested mode really runs as on this install (the worker reports it at warm-up)."""
    runs_as = ModeRun.objects.filter(requested=mode).values_list("runs_as", flat=True).first()
    return runs_as or mode


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
        sentence = (
            f"Price: {money(quoted)} credits, set aside while the swap runs. You pay at most this; "
            "if it fails or is canceled, nothing is charged."
        )
    elif state == "paid":
        sentence = f"Paid {money(paid)} credits (the price shown was {money(quoted)})."
    elif state == "released":
        sentence = f"Nothing was charged: the {money(hold.amount)} credits set aside are available again."
    else:
        sentence = f"Refunded {money(refunded)} credits: this swap cost you nothing."
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
    gpu_cost: Decimal = Decimal(0)  # what the GPU time cost the operator
    margin: Decimal = Decimal(0)  # net − GPU cost
    capped_jobs: int = 0  # jobs whose formula came out above the quote (charged the quote)


USAGE_SUMMED = ("jobs", "frames", "gpu_seconds", "charged", "refunded", "net", "gpu_cost", "margin", "capped_jobs")


def usage_totals(rows: list[UsageRow]) -> list[dict]:
    """One total row per currency of the report's rows (amounts in different currencies never add)."""
    totals: dict[str, dict] = {}
    for row in rows:
        total = totals.setdefault(row.currency, {"currency": row.currency, **{name: 0 for name in USAGE_SUMMED}})
        for name in USAGE_SUMMED:
            total[name] += getattr(row, name)
    return [totals[currency] for currency in sorted(totals)]


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
            gpu_cost=Coalesce(Sum("charge__gpu_cost", filter=captures), _ZERO, output_field=_MONEY),
            capped_jobs=Count("id", filter=captures & Q(charge__capped=True)),
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
                gpu_cost=row["gpu_cost"].quantize(Decimal("0.0001")),
                margin=(row["charged"] - row["refunded"] - row["gpu_cost"]).quantize(Decimal("0.0001")),
                capped_jobs=row["capped_jobs"],
            )
        )
    return report


def _as_date(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


@dataclass(frozen=True)
class HistoryRow:
    """One line of a user's history: a whole job (its entries folded in), or one money movement."""

    created_at: datetime
    job_id: uuid.UUID | None
    entries: list[LedgerEntry]
    title: str  # "Swap", "Credits bought", …
    price: Decimal | None  # jobs: the quote
    paid: Decimal | None  # jobs: what was captured (None while running or when nothing was charged)
    refunded: Decimal | None
    amount: Decimal  # the change to the balance, signed (0 while a job runs)
    status: str  # "reserved" | "paid" | "released" | "refunded" | "" for non-job rows


_ENTRY_TITLES = {
    EntryKind.TOP_UP: "Credits added",
    EntryKind.PURCHASE: "Credits bought",
    EntryKind.REVERSAL: "Purchase reversed",
    EntryKind.ADJUSTMENT: "Correction",
}


def history_keys(*, user) -> list[tuple[datetime, str, Any]]:
    """Every history row's (time, kind, key), newest first: one per job, one per other entry."""
    entries = LedgerEntry.objects.filter(account__user=user)
    jobs = entries.filter(job_id__isnull=False).order_by().values("job_id").annotate(first=Min("created_at"))
    keys = [(row["first"], "job", row["job_id"]) for row in jobs]
    keys += [
        (created_at, "entry", pk)
        for pk, created_at in entries.filter(job_id__isnull=True).values_list("id", "created_at")
    ]
    keys.sort(key=lambda key: (key[0], str(key[2])), reverse=True)
    return keys


def history_rows(keys: list[tuple[datetime, str, Any]]) -> list[HistoryRow]:
    """The rows for one page of history_keys."""
    job_ids = [key for _, what, key in keys if what == "job"]
    entry_ids = [key for _, what, key in keys if what == "entry"]
    by_job: dict[uuid.UUID, list[LedgerEntry]] = {}
    for entry in LedgerEntry.objects.filter(job_id__in=job_ids).order_by("created_at", "id"):
        by_job.setdefault(entry.job_id, []).append(entry)
    singles = {entry.pk: entry for entry in LedgerEntry.objects.filter(pk__in=entry_ids)}
    rows = []
    for created_at, what, key in keys:
        if what == "job":
            rows.append(_job_row(created_at, key, by_job.get(key, [])))
        elif key in singles:
            entry = singles[key]
            signed = -entry.amount if entry.kind in BALANCE_DEBIT_KINDS else entry.amount
            rows.append(
                HistoryRow(
                    created_at=created_at,
                    job_id=None,
                    entries=[entry],
                    title=_ENTRY_TITLES.get(entry.kind, entry.get_kind_display()),
                    price=None,
                    paid=None,
                    refunded=None,
                    amount=signed,
                    status="",
                )
            )
    return rows


def _job_row(created_at: datetime, job_id: uuid.UUID, entries: list[LedgerEntry]) -> HistoryRow:
    kinds = {entry.kind: entry for entry in entries}
    hold = kinds.get(EntryKind.HOLD)
    capture = kinds.get(EntryKind.CAPTURE)
    refund = kinds.get(EntryKind.REFUND)
    price = Decimal((hold.details.get("quote") or {}).get("amount", hold.amount)) if hold else None
    if refund is not None:
        status = "refunded"
    elif capture is not None:
        status = "paid"
    elif EntryKind.RELEASE in kinds:
        status = "released"
    else:
        status = "reserved"
    paid = capture.amount if capture is not None else None
    refunded = refund.amount if refund is not None else None
    amount = -(paid or Decimal(0)) + (refunded or Decimal(0))
    return HistoryRow(
        created_at=created_at,
        job_id=job_id,
        entries=entries,
        title="Swap",
        price=price,
        paid=paid,
        refunded=refunded,
        amount=amount,
        status=status,
    )


def credit_value(*, credits: Decimal) -> tuple[Decimal, str] | None:
    """What credits are worth in money at the list price (the smallest active pack), if any."""
    pack = CreditPack.objects.filter(active=True).order_by("credits", "price").first()
    if pack is None or pack.credits <= 0:
        return None
    return (credits * pack.price / pack.credits).quantize(Decimal("0.01")), pack.currency
