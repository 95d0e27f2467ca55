"""ruff's rules (pyproject.toml) hold on the tree, so `make test` and CI enforce them: among them
RUF100, which fails a `noqa` that suppresses nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_check_passes():
    result = subprocess.run(
        [str(Path(sys.executable).parent / "ruff"), "check", "--no-cache", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
