"""Reading Prometheus text exposition in tests: samples by name and labels, so a test asserts on
what a scrape would give Prometheus (deltas, since the multiprocess files live for the session)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(scrape: dict, name: str, **labels) -> float:
    """Sum of every sample `name` whose labels include `labels` (0 when there is none)."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in scrape.items() if n == name and wanted <= ls)


def label_values(scrape: dict, name: str, label: str) -> set[str]:
    return {dict(ls)[label] for (n, ls), _ in scrape.items() if n == name and label in dict(ls)}
