"""The import contracts in pyproject.toml hold on this tree, and they catch a new cycle."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("webapp", "swap", "moderation", "billing")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_import_contracts_hold():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_new_cycle_inside_jobs_fails_the_contracts(tmp_path):
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "static"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    lifecycle = tmp_path / "webapp" / "jobs" / "services" / "lifecycle.py"
    # services → steps closes a cycle (steps already import services).
    lifecycle.write_text(lifecycle.read_text() + "\nfrom webapp.jobs.steps import image  # noqa: E402, F401\n")

    result = lint_imports(tmp_path)

    assert result.returncode != 0
    assert "webapp.jobs: tasks > steps > services" in result.stdout
    assert "webapp.jobs.services.lifecycle -> webapp.jobs.steps.image" in result.stdout
