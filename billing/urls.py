"""Billing API routes; the platform mounts them under /api/v1/."""

from __future__ import annotations

from django.urls import path

from billing.api.ledger import LedgerExportCsvApi, LedgerListApi
from billing.api.quotes import QuoteCreateApi

app_name = "billing"

urlpatterns = [
    path("quotes", QuoteCreateApi.as_view(), name="quote-create"),
    path("ledger", LedgerListApi.as_view(), name="ledger-list"),
    path("ledger/export.csv", LedgerExportCsvApi.as_view(), name="ledger-export-csv"),
]
