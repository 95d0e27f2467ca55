"""The series names the code exports: read from the metric registry and the scrape-time collector,
not from a list kept by hand, so a renamed metric breaks the rules/dashboard tests."""

from __future__ import annotations

import re
from pathlib import Path

from prometheus_client import REGISTRY

from webapp.ops.metrics_endpoint import StackCollector
from webapp.telemetry import metrics as _defined  # noqa: F401 - registers every Visage metric

SUFFIXES = {"histogram": ("_bucket", "_count", "_sum"), "counter": ("_total",), "gauge": ("",)}
PROMQL_WORDS = {
    "sum",
    "rate",
    "increase",
    "histogram_quantile",
    "by",
    "without",
    "on",
    "unless",
    "and",
    "or",
    "max",
    "min",
    "avg",
    "count",
    "vector",
    "group_left",
    "group_right",
    "le",
    "offset",
    "irate",
    "bool",
}


TRITON_METRICS = Path(__file__).with_name("triton_metrics.txt")


def triton_series() -> set[str]:
    """Triton's own series (scrape job visage-triton), checked against a running Triton's /metrics
    by tests/swap/serve/test_triton.py."""
    lines = TRITON_METRICS.read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def exported_series() -> set[str]:
    names = set()
    for family in [*REGISTRY.collect(), *StackCollector().collect()]:
        if not family.name.startswith("visage_"):
            continue
        for suffix in SUFFIXES.get(family.type, ("",)):
            names.add(family.name + suffix)
    return names


def metric_names_in(expr: str) -> set[str]:
    """Metric names an expression reads (label matchers, strings and durations removed)."""
    expr = re.sub(r'"[^"]*"', "", expr)
    expr = re.sub(r"\{[^}]*\}", "", expr)
    expr = re.sub(r"\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(by|without|on|group_left|group_right)\s*\([^)]*\)", "", expr)
    words = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", expr))
    return {w for w in words if w not in PROMQL_WORDS and not re.fullmatch(r"\d+\w*", w)}
