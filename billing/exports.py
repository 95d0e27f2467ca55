"""CSV exports of the ledger and the usage report (shared by the API and the admin)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from billing.models import LedgerEntry
from billing.reports import UsageRow

LEDGER_COLUMNS = ["id", "created_at", "kind", "amount", "job_id", "reason"]
# The usage report's columns: CSV header (the key) and the admin page's header (the value).
USAGE_COLUMNS = {
    "month": "Month", "user_id": "User id", "username": "User", "currency": "Currency", "jobs": "Jobs",
    "frames": "Frames", "gpu_seconds": "GPU seconds", "charged": "Charged", "refunded": "Refunded",
    "net": "Net", "gpu_cost": "GPU cost", "margin": "Margin", "capped_jobs": "Capped jobs",
}  # fmt: skip

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: str) -> str:
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
                spreadsheet_safe(entry.reason),
            ]
        )
    return out.getvalue()


def usage_csv(rows: Iterable[UsageRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(list(USAGE_COLUMNS))
    for row in rows:
        writer.writerow(
            [
                row.month.strftime("%Y-%m"),
                row.user_id,
                spreadsheet_safe(row.username),
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
