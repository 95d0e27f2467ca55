"""Billing figures for /metrics: how often the formula came out above the quote (the job was
charged the quote). A high share means quotes run low and the operator's margin is at risk:
alert on visage_billing_capped_ratio_last_hour (e.g. > 0.2 for 30 minutes). Only the last hour is
read (an indexed range), so a scrape does not grow with the table."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Count, Q
from django.utils import timezone
from prometheus_client import CollectorRegistry, Gauge

from billing.models import Charge


def add_to(registry: CollectorRegistry) -> None:
    since = timezone.now() - timedelta(hours=1)
    totals = Charge.objects.filter(created_at__gte=since).aggregate(
        jobs=Count("id"), capped=Count("id", filter=Q(capped=True))
    )
    charges = Gauge(
        "visage_billing_charges_last_hour", "Jobs charged in the last hour", ["capped"], registry=registry
    )
    charges.labels(capped="true").set(totals["capped"])
    charges.labels(capped="false").set(totals["jobs"] - totals["capped"])
    Gauge(
        "visage_billing_capped_ratio_last_hour",
        "Share of last hour's charges capped at the quote (formula above the quote)",
        registry=registry,
    ).set(totals["capped"] / totals["jobs"] if totals["jobs"] else 0)
