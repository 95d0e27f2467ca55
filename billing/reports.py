"""Billing reports: the operator's monthly usage report (admin, CSV export) and the rows of a
user's credit history (the site's credits page). Read-only, like selectors, which they build on."""

from __future__ import annotations

import calendar
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Count, Min, Q, Sum
from django.db.models.functions import Coalesce, TruncMonth
from django.utils.translation import gettext_lazy

from billing.choices import BALANCE_DEBIT_KINDS, EntryKind
from billing.models import LedgerEntry, PricePlan
from billing.selectors import MONEY_FIELD, ZERO_MONEY, default_plan, quantize_for_plan

__all__ = ["HistoryRow", "UsageRow", "history_keys", "history_rows", "usage_report", "usage_totals"]


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


USAGE_SUMMED = (
    "jobs",
    "frames",
    "gpu_seconds",
    "charged",
    "refunded",
    "net",
    "gpu_cost",
    "margin",
    "capped_jobs",
)


def usage_totals(rows: list[UsageRow]) -> list[dict]:
    """One total row per currency of the report's rows (amounts in different currencies never add)."""
    totals: dict[str, dict] = {}
    for row in rows:
        total = totals.setdefault(
            row.currency, {"currency": row.currency, **{name: 0 for name in USAGE_SUMMED}}
        )
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
            gpu_seconds=Coalesce(
                Sum("charge__gpu_seconds", filter=captures), ZERO_MONEY, output_field=MONEY_FIELD
            ),
            charged=Coalesce(Sum("amount", filter=captures), ZERO_MONEY, output_field=MONEY_FIELD),
            refunded=Coalesce(
                Sum("amount", filter=Q(kind=EntryKind.REFUND)), ZERO_MONEY, output_field=MONEY_FIELD
            ),
            gpu_cost=Coalesce(Sum("charge__gpu_cost", filter=captures), ZERO_MONEY, output_field=MONEY_FIELD),
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
                charged=quantize_for_plan(row["charged"], plan),
                refunded=quantize_for_plan(row["refunded"], plan),
                net=quantize_for_plan(row["charged"] - row["refunded"], plan),
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
    EntryKind.TOP_UP: gettext_lazy("Credits added"),
    EntryKind.PURCHASE: gettext_lazy("Credits bought"),
    EntryKind.REVERSAL: gettext_lazy("Purchase reversed"),
    EntryKind.ADJUSTMENT: gettext_lazy("Correction"),
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
        title=gettext_lazy("Swap"),
        price=price,
        paid=paid,
        refunded=refunded,
        amount=amount,
        status=status,
    )
