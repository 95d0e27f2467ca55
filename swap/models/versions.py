"""Model roll-outs: start a canary, promote it, roll back (`python -m swap models canary|promote|rollback`).

Where versions live and which one is stable is the registry's business (`swap.models.registry`):

    <models_dir>/<file>                        version 1 (or the manifest's `version`): the classic place
    <models_dir>/<name>/<version>/<file>       any other version
    <models_dir>/versions.json                 {"<name>": {"stable": 1, "canary": 2, "previous": [..]}}

`start_canary` makes a version the canary; `promote` makes it stable (the old stable is
remembered); `rollback` drops a running canary, or, when none runs, returns to the previous
stable version. The share of jobs sent to canaries is a deployment setting
(VISAGE_CANARY_PERCENT), see `swap.models.canary`.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from swap.models.registry import (
    STATE_FILE,
    ModelRollout,
    installed_versions,
    load_state,
    manifest_version,
    rollout_for,
    stable_version,
    version_path,
)

__all__ = [
    "ModelRollout",
    "VersionError",
    "installed_versions",
    "load_state",
    "manifest_version",
    "promote",
    "rollback",
    "rollout_for",
    "save_state",
    "stable_version",
    "start_canary",
    "version_path",
]


class VersionError(Exception):
    """A roll-out command that cannot be carried out (one-line reason)."""


def save_state(models_dir: Path, state: dict[str, ModelRollout]) -> None:
    """Atomic write: a worker reading the file mid-update sees the old or the new state, never half."""
    models_dir = Path(models_dir)
    models_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{STATE_FILE}.", dir=models_dir)
    with os.fdopen(fd, "w") as handle:
        json.dump({name: rollout.to_json() for name, rollout in sorted(state.items())}, handle, indent=2)
    os.chmod(tmp, 0o644)  # read by workers and Triton running as other users (mkstemp makes 0600)
    os.replace(tmp, models_dir / STATE_FILE)


def _require_installed(name: str, version: int, models_dir: Path) -> None:
    if version not in installed_versions(name, models_dir):
        raise VersionError(
            f"{name} version {version} is not installed in {models_dir} "
            f"(install it with: python -m swap models install PATH --name {name} --version {version})"
        )


def start_canary(name: str, version: int, models_dir: Path, *, percent: float | None = None) -> ModelRollout:
    """`version` becomes the canary; `percent` (0-100) of jobs run it from the next job on (None:
    keep the model's percentage, or the deployment's VISAGE_CANARY_PERCENT). Workers read this file
    per job, so starting, re-weighting or rolling back needs no restart."""
    if percent is not None and not 0.0 <= percent <= 100.0:
        raise VersionError(f"the canary percentage must be between 0 and 100, not {percent}")
    state = load_state(models_dir)
    rollout = rollout_for(name, models_dir, state)
    _require_installed(name, version, models_dir)
    if version == rollout.stable:
        raise VersionError(f"{name} version {version} is already the stable version")
    rollout.canary = version
    if percent is not None:
        rollout.percent = percent
    state[name] = rollout
    save_state(models_dir, state)
    return rollout


def promote(name: str, models_dir: Path) -> ModelRollout:
    """The canary becomes stable; the old stable is remembered for `rollback`."""
    state = load_state(models_dir)
    rollout = rollout_for(name, models_dir, state)
    if rollout.canary is None:
        raise VersionError(f"{name} has no canary to promote (start one: models canary {name} VERSION)")
    _require_installed(name, rollout.canary, models_dir)
    rollout.previous.append(rollout.stable)
    rollout.stable, rollout.canary = rollout.canary, None
    state[name] = rollout
    save_state(models_dir, state)
    return rollout


def rollback(name: str, models_dir: Path) -> ModelRollout:
    """Drop a running canary; with none running, return to the previous stable version."""
    state = load_state(models_dir)
    rollout = rollout_for(name, models_dir, state)
    if rollout.canary is not None:
        rollout.canary = None
    elif rollout.previous:
        rollout.stable = rollout.previous.pop()
    else:
        raise VersionError(f"{name} has no canary and no earlier stable version to roll back to")
    state[name] = rollout
    save_state(models_dir, state)
    return rollout
