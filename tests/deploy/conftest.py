"""Deploy checks need Debian's `prometheus` package (promtool, prometheus). Locally they skip with
the reason when it is missing; under CI=true (.ci/run installs it) a missing binary fails."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def prometheus_binary(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    package = "prometheus-alertmanager" if name == "prometheus-alertmanager" else "prometheus"
    message = f"`{name}` is not installed (apt-get install {package}); the Prometheus and alerting checks need it"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " — required under CI=true")
    pytest.skip(message)


@pytest.fixture
def promtool() -> str:
    return prometheus_binary("promtool")
