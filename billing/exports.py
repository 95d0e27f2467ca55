"""CSV exports of the ledger and the usage report (shared by the API and the admin)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from billing.models import LedgerEntry
from billing.selectors import UsageRow

LEDGER_COLUMNS = ["id", "created_at", "kind", "amount", "job_id", "reason"]
USAGE_COLUMNS = [
    "month",
    "user_id",
    "username",
    "currency",
    "jobs",
    "frames",
    "gpu_seconds",
    "charged",
    "refunded",
    "net",
    "gpu_cost",
    "margin",
    "capped_jobs",
]

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str) -> str:
    """Neutralise spreadsheet formulas in free text (CSV injection)."""
    return f"'{value}" if value.startswith(_FORMULA_PREFIXES) else value


def ledger_csv(entries: Iterable[LedgerEntry]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(LEDGER_COLUMNS)
    for entry in entries:
        writer.writerow(
            [
                entry.id,
                entry.created_at.isoformat(),
                entry.kind,
                entry.amount,
                entry.job_id or "",
                _text(entry.reason),
            ]
        )
    return out.getvalue()


def usage_csv(rows: Iterable[UsageRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(USAGE_COLUMNS)
    for row in rows:
        writer.writerow(
            [
                row.month.strftime("%Y-%m"),
                row.user_id,
                _text(row.username),
                row.currency,
                row.jobs,
                row.frames,
                row.gpu_seconds,
                row.charged,
                row.refunded,
                row.net,
                row.gpu_cost,
                row.margin,
                row.capped_jobs,
            ]
        )
    return out.getvalue()
