"""The TypeScript types (clients/typescript/schema.d.ts) are what openapi-typescript makes of the
committed schema, and the example app type-checks against them (`tsc --noEmit`). Needs node and
npm (and the npm registry for `npm ci`): skipped without them, failed under CI=true."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[3] / "clients" / "typescript"


@pytest.fixture(scope="module")
def npm_installed():
    if shutil.which("node") is None or shutil.which("npm") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node and npm are needed for the TypeScript client check under CI")
        pytest.skip("node and npm are not installed")
    started = time.perf_counter()
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=CLIENT, check=True, timeout=600)
    print(f"npm ci took {time.perf_counter() - started:.1f} s")


def _npx(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["npx", "--no-install", *args], cwd=CLIENT, capture_output=True, text=True, timeout=300
    )


def test_the_committed_types_are_generated_from_the_committed_schema(npm_installed, tmp_path):
    generated = tmp_path / "schema.d.ts"
    run = _npx("openapi-typescript", "../../docs/openapi.yaml", "-o", str(generated))
    assert run.returncode == 0, run.stderr
    assert generated.read_text() == (CLIENT / "schema.d.ts").read_text(), (
        "clients/typescript/schema.d.ts is out of date: run clients/regenerate.sh"
    )


def test_the_example_app_type_checks_against_the_generated_types(npm_installed):
    run = _npx("tsc", "--noEmit")
    assert run.returncode == 0, run.stdout + run.stderr
