"""MediaPipe's face models (the default detector and mesh) for tests: the files `make` fetched at
install time (`python -m swap models fetch mediapipe-face --models-dir var/models`), linked into a
test's own models folder. Nothing is downloaded at test time: without them a test skips with the
reason, and fails under CI=true."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swap.models import registry

REPO = Path(__file__).resolve().parents[2]
INSTALLED_MODELS_DIR = REPO / "var" / "models"
MEDIAPIPE_FACE = registry.bundles()["mediapipe-face"]
FETCH = "python -m swap models fetch mediapipe-face --models-dir var/models"


def link_mediapipe_models(models_dir: Path) -> bool:
    """Link the installed MediaPipe files into `models_dir`; False (nothing linked) when absent."""
    files = [registry.get_spec(name).file for name in MEDIAPIPE_FACE]
    if not all((INSTALLED_MODELS_DIR / name).is_file() for name in files):
        return False
    Path(models_dir).mkdir(parents=True, exist_ok=True)
    for name in files:
        target = Path(models_dir) / name
        if not target.exists():
            target.symlink_to(INSTALLED_MODELS_DIR / name)
    return True


def require_mediapipe_models(models_dir: Path) -> Path:
    """`models_dir` with the MediaPipe files in it, or skip (fail under CI=true) when not installed."""
    if link_mediapipe_models(models_dir):
        return Path(models_dir)
    reason = f"MediaPipe's face models are not installed in {INSTALLED_MODELS_DIR} (run `{FETCH}`)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; required under CI=true")
    pytest.skip(reason)
