"""The Triton venv the Triton tests need (var/triton-venv, Debian's /usr/bin/python3; see
swap.serve.launcher): on CI it is installed by whichever Triton test comes first (~4 min), so no
test's coverage depends on the random order; locally they skip without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swap.serve import launcher


def triton_venv() -> Path:
    venv = Path(os.environ.get("VISAGE_TRITON_VENV", launcher.DEFAULT_VENV))
    if launcher.venv_ready(venv):
        return venv
    if os.environ.get("CI") == "true":
        launcher.ensure_venv(venv)  # a failure fails the run
        return venv
    pytest.skip(
        f"no Triton venv at {venv} (PyTriton needs Debian's /usr/bin/python3 in its own venv): "
        "create it with `make triton-venv` (about 4 minutes) to run the Triton tests"
    )
