"""The import contracts in pyproject.toml hold on this tree, and they catch a new cycle; no test module
is used as a library by another."""

from __future__ import annotations

import ast
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


def imported_test_modules(root: Path, path: Path) -> list[str]:
    """The `test_*` modules that the file at `path` imports, by dotted name (relative imports resolved)."""
    package = list(path.relative_to(root).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = package[: len(package) - node.level + 1] if node.level else []
            base = ".".join([*parts, *([node.module] if node.module else [])])
            # `from tests.x import test_y` names a module when tests/x/test_y.py exists.
            named = [f"{base}.{alias.name}" for alias in node.names]
            modules = [base, *(name for name in named if (root / (name.replace(".", "/") + ".py")).is_file())]
        else:
            continue
        found += [module for module in modules if any(part.startswith("test_") for part in module.split("."))]
    return found


def importers_of_test_modules(root: Path) -> dict[str, list[str]]:
    return {
        str(path.relative_to(root)): imported
        for folder in ("tests", "bench")
        for path in sorted((root / folder).rglob("*.py"))
        if (imported := imported_test_modules(root, path))
    }


def test_no_test_module_imports_another():
    """Shared helpers live in tests/helpers/ (or a conftest): a helper kept in a test module is hard
    to find, and ties tests that share nothing else to that module's edits."""
    offenders = importers_of_test_modules(ROOT)
    assert offenders == {}


def test_an_import_from_a_test_module_is_found(tmp_path):
    (tmp_path / "tests" / "billing").mkdir(parents=True)
    (tmp_path / "tests" / "billing" / "test_ledger.py").write_text("def funded(): ...\n")
    importer = tmp_path / "tests" / "billing" / "test_stripe.py"
    importer.write_text(
        "from tests.billing.test_ledger import funded\n"
        "from . import test_ledger\n"
        "from .test_ledger import funded as again\n"
        "import tests.billing.test_ledger\n"
        "from tests.helpers.problems import assert_problem\n"
    )

    assert imported_test_modules(tmp_path, importer) == ["tests.billing.test_ledger"] * 4
