"""Billing check: 50 jobs across modes, resolutions, photos and videos (tests/webapp/jobs/
test_billing_e2e.py, on a real worker after its warm-up measurement), then the distribution of
charge / quote, how often the quote capped the charge, and quote/charge per kind.

    .venv/bin/python bench/billing.py                      # runs the 50 jobs, then prints
    .venv/bin/python bench/billing.py --report FILE.json   # prints a report the test already wrote
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--report":
        summarize(json.loads(Path(sys.argv[2]).read_text()))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "billing.json"
        env = {
            **os.environ,
            "VISAGE_BILLING_E2E_REPORT": str(report),
            "VISAGE_BILLING_E2E_PHOTOS": "42",
            "VISAGE_BILLING_E2E_VIDEOS": "8",
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:randomly",
                "tests/webapp/jobs/test_billing_e2e.py",
            ],
            cwd=ROOT,
            env=env,
        )
        if done.returncode != 0 or not report.exists():
            print("the 50-job check failed; see above")
            return 1
        rows = json.loads(report.read_text())
    summarize(rows)
    return 0


def summarize(rows: list[dict]) -> None:
    ratios = [float(Decimal(r["charge"]) / Decimal(r["quote"])) for r in rows]
    print(
        f"jobs: {len(rows)}  (photos {sum(r['kind'] == 'photo' for r in rows)}, "
        f"videos {sum(r['kind'] == 'video' for r in rows)})"
    )
    print(f"charge ≤ quote for every job: {all(Decimal(r['charge']) <= Decimal(r['quote']) for r in rows)}")
    for kind in ("all", "photo", "video"):
        chosen = [(ratio, row) for ratio, row in zip(ratios, rows, strict=True) if kind in ("all", row["kind"])]
        if len(chosen) < 2:
            continue
        money = [ratio for ratio, _ in chosen]
        qs = statistics.quantiles(money, n=10)
        print(
            f"{kind:5} charge/quote: min {min(money):.2f}  p10 {qs[0]:.2f}  median {statistics.median(money):.2f}  "
            f"p90 {qs[-1]:.2f}  max {max(money):.2f}  within 2x {sum(r >= 0.5 for r in money)}/{len(money)}  "
            f"capped {sum(row['capped'] for _, row in chosen)}"
        )
        # The same before the minimum charge and rounding: measured / quoted GPU seconds.
        gpu = [
            float(row["gpu_seconds"]) / float(row["quote_gpu_seconds"])
            for _, row in chosen
            if row.get("quote_gpu_seconds")
        ]
        if len(gpu) >= 2:
            gs = statistics.quantiles(gpu, n=10)
            print(
                f"{'':5} GPU s measured/quoted: min {min(gpu):.2f}  p10 {gs[0]:.2f}  "
                f"median {statistics.median(gpu):.2f}  p90 {gs[-1]:.2f}  max {max(gpu):.2f}  "
                f"within 2x {sum(0.5 <= g for g in gpu)}/{len(gpu)}  above the quote {sum(g > 1 for g in gpu)}"
            )
    groups = defaultdict(list)
    for row, ratio in zip(rows, ratios, strict=True):
        groups[(row["kind"], row["mode"], row["resolution"])].append((ratio, row))
    print(f"{'kind':6} {'mode':9} {'res':9} {'n':>2} {'quote':>7} {'charge':>7} {'formula':>8} {'ratio':>6}")
    for (kind, mode, resolution), items in sorted(groups.items()):
        quote = statistics.mean(float(r["quote"]) for _, r in items)
        charge = statistics.mean(float(r["charge"]) for _, r in items)
        formula = statistics.mean(float(r["formula"]) for _, r in items)
        ratio = statistics.mean(x for x, _ in items)
        print(
            f"{kind:6} {mode:9} {resolution:9} {len(items):>2} {quote:7.2f} {charge:7.2f} {formula:8.2f} {ratio:6.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
