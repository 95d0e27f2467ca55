"""The documentation site (docs/, mkdocs.yml) and the README that points to it.

- `docs/configuration.md` documents every environment variable `webapp/settings.py` reads, once,
  with the default settings.py gives it (parsed from settings.py's `env_*("NAME", default)` calls).
- `mkdocs build --strict` succeeds: no broken link, no missing page or include.
- Every relative link in README.md resolves to a file.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "webapp" / "settings.py"
CONFIGURATION_PAGE = ROOT / "docs" / "configuration.md"
TABLE_HEADER = "| variable | default | meaning |"

# Defaults settings.py computes rather than states: the page says `computed: …` in words. When one of
# these expressions changes, re-read what the page says and update the expression here.
COMPUTED_DEFAULTS = {
    "VISAGE_DATA_DIR": 'str(BASE_DIR / "var")',
    "ALLOWED_HOSTS": '["*"] if not PRODUCTION else []',
    "DATABASE_URL": "f\"sqlite:///{DATA_DIR / 'visage.sqlite3'}\"",
    "SECURE_HSTS_SECONDS": "31_536_000 if SECURE_SSL_REDIRECT or SESSION_COOKIE_SECURE else 0",
    "VISAGE_MODERATION_WORKERS": "max(1, (os.cpu_count() or 2) // 2)",
    "VISAGE_VIDEO_MAX_BYTES": "MAX_UPLOAD_BYTES",
    "VISAGE_MODELS_DIR": 'str(DATA_DIR / "models")',
    "VISAGE_WEBHOOK_ALLOW_PRIVATE": "not PRODUCTION",
    "VISAGE_AIGC_PRODUCER": "SERVICE_NAME",
}


class NotLiteral(Exception):
    pass


def _literal(node: ast.expr):
    """A default's value when it is a constant expression (numbers, strings, lists, arithmetic)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_literal(node.operand)
    if isinstance(node, ast.BinOp):
        left, right = _literal(node.left), _literal(node.right)
        operations = {ast.Add: left + right, ast.Sub: left - right, ast.Mult: left * right}
        if type(node.op) in operations:
            return operations[type(node.op)]
    raise NotLiteral(ast.dump(node))


def settings_reads() -> dict[str, tuple[str, ast.expr, str]]:
    """Every `env_<kind>("NAME", default)` call in settings.py: NAME → (kind, default node, its source)."""
    source = SETTINGS.read_text()
    reads = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("env_"):
            name_node, default = node.args
            assert isinstance(name_node, ast.Constant), f"settings.py line {node.lineno}: name not a literal"
            reads[name_node.value] = (node.func.id, default, ast.get_source_segment(source, default))
    return reads


def documented_defaults(page: str) -> tuple[dict[str, str], list[str]]:
    """The configuration page's tables: variable → its default cell; and every row's names in order."""
    rows: dict[str, str] = {}
    every_name: list[str] = []
    in_table = False
    for line in page.splitlines():
        if line.strip() == TABLE_HEADER:
            in_table = True
            continue
        if not in_table or not line.startswith("|"):
            in_table = False
            continue
        if set(line) <= set("|- "):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        names = re.findall(r"`([A-Z][A-Z0-9_]*)`", cells[0])
        every_name.extend(names)
        for name in names:
            rows[name] = cells[1] if len(names) == 1 else f"<{len(names)} variables in one row>"
    return rows, every_name


def _default_problem(kind: str, default, cell: str) -> str | None:
    """Why a documented default cell disagrees with settings.py's literal default, or None."""
    code = re.match(r"`([^`]*)`", cell)
    if cell.startswith("empty"):
        return None if default in ("", [], {}, None) else f"documented empty, settings.py has {default!r}"
    if not code:
        return f"the default must start with a `literal`, `empty` or `computed`, not {cell!r}"
    text = code.group(1)
    if kind == "env_bool":
        return (
            None if text == ("1" if default else "0") else f"documented {text!r}, settings.py has {default!r}"
        )
    if kind in ("env_int", "env_float"):
        try:
            same = float(text) == float(default)
        except ValueError:
            return f"documented {text!r}, not a number"
        return None if same else f"documented {text!r}, settings.py has {default!r}"
    if kind == "env_list":
        same = [item.strip() for item in text.split(",")] == default
        return None if same else f"documented {text!r}, settings.py has {default!r}"
    if kind == "env_json":
        return None if json.loads(text) == default else f"documented {text!r}, settings.py has {default!r}"
    return None if text == default else f"documented {text!r}, settings.py has {default!r}"


def configuration_problems(page: str, reads: dict) -> list[str]:
    rows, every_name = documented_defaults(page)
    problems = [
        f"{name} is in more than one row of the configuration page"
        for name in sorted({n for n in every_name if every_name.count(n) > 1})
    ]
    for name, (kind, default_node, default_source) in sorted(reads.items()):
        if name not in rows:
            problems.append(
                f"{name} (settings.py: {kind}, default {default_source}) is not on the configuration page"
            )
            continue
        cell = rows[name]
        if cell.startswith("<"):
            problems.append(f"{name}: one variable per row for what settings.py reads ({cell})")
            continue
        try:
            default = _literal(default_node)
        except NotLiteral:
            if COMPUTED_DEFAULTS.get(name) != default_source:
                problems.append(
                    f"{name}: settings.py computes its default as {default_source}; check the page says so "
                    "and record the expression in COMPUTED_DEFAULTS"
                )
            elif not cell.startswith("computed"):
                problems.append(
                    f"{name}: the default is computed ({default_source}); the page must say `computed: …`"
                )
            continue
        problem = _default_problem(kind, default, cell)
        if problem:
            problems.append(f"{name}: {problem}")
    return problems


def test_every_setting_is_documented_once_with_its_default():
    problems = configuration_problems(CONFIGURATION_PAGE.read_text(), settings_reads())
    assert not problems, "\n".join(problems)


def test_the_configuration_check_catches_a_missing_duplicated_or_wrong_setting():
    reads = settings_reads()
    page = CONFIGURATION_PAGE.read_text()
    missing = re.sub(r"^\| `S3_REGION` \|.*\n", "", page, flags=re.M)
    assert any(p.startswith("S3_REGION ") for p in configuration_problems(missing, reads))
    wrong = page.replace("| `VISAGE_JOB_MAX_ATTEMPTS` | `3` |", "| `VISAGE_JOB_MAX_ATTEMPTS` | `4` |")
    assert wrong != page
    assert any(p.startswith("VISAGE_JOB_MAX_ATTEMPTS:") for p in configuration_problems(wrong, reads))
    twice = page.replace("| `DEBUG` | `0` |", "| `DEBUG` | `0` | x |\n| `DEBUG` | `1` |")
    assert twice != page
    assert "DEBUG is in more than one row of the configuration page" in configuration_problems(twice, reads)


def test_settings_py_reads_are_found():
    reads = settings_reads()
    assert {"DEBUG", "SECRET_KEY", "VISAGE_JOB_MAX_ATTEMPTS", "VISAGE_THROTTLE_EXPORT"} <= reads.keys()
    assert len(reads) > 100


def test_mkdocs_build_strict(tmp_path):
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (site / "configuration.html").exists()
    assert (site / "openapi.yaml").read_text() == (ROOT / "docs" / "openapi.yaml").read_text()
    assert (site / "assets" / "redoc.standalone.js").stat().st_size > 100_000  # the offline ReDoc bundle
    assert "VisageGpuBacklogHigh" in (site / "operations" / "runbook.html").read_text()


def test_mkdocs_strict_fails_on_a_broken_link(tmp_path):
    """The same configuration with one page linking to a page that does not exist."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Index\n")
    (docs / "broken.md").write_text("# Broken\n\nSee [nowhere](no-such-page.md).\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        f"INHERIT: {ROOT / 'mkdocs.yml'}\ndocs_dir: {docs}\nhooks: []\nnav:\n  - index.md\n  - broken.md\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(config),
            "--site-dir",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert "no-such-page.md" in result.stdout + result.stderr


README_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
README_RELATIVE_LINKS = [
    target
    for target in README_LINK.findall((ROOT / "README.md").read_text())
    if not re.match(r"[a-z]+:", target) and not target.startswith("#")  # absolute URLs, in-page anchors
]


def test_readme_points_to_the_docs():
    assert "docs/index.md" in README_RELATIVE_LINKS
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150


@pytest.mark.parametrize("target", README_RELATIVE_LINKS)
def test_readme_links_resolve(target):
    assert (ROOT / target.split("#")[0]).is_file(), f"README.md links to {target}, which is not a file"
