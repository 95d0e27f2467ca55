"""Model versions: where each version's file lives, which version is stable, which is the canary.

Layout (Triton's model-repository shape, so `python -m swap serve` can bind every version):

    <models_dir>/<file>                        version 1 (or the manifest's `version`): the classic place
    <models_dir>/<name>/<version>/<file>       any other version
    <models_dir>/versions.json                 {"<name>": {"stable": 1, "canary": 2, "previous": [..]}}

`versions.json` is the roll-out state. `python -m swap models canary NAME VERSION` starts a
canary; `promote NAME` makes it stable (the old stable is remembered); `rollback NAME` drops a
running canary, or, when none runs, returns to the previous stable version. The percentage of
jobs sent to canaries is a deployment setting (VISAGE_CANARY_PERCENT), see `swap.models.canary`.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

STATE_FILE = "versions.json"


class VersionError(Exception):
    """A roll-out command that cannot be carried out (one-line reason)."""


@dataclass
class ModelRollout:
    stable: int = 1
    canary: int | None = None
    previous: list[int] = field(default_factory=list)  # earlier stable versions, newest last

    def to_json(self) -> dict:
        return {"stable": self.stable, "canary": self.canary, "previous": list(self.previous)}


def manifest_version(name: str) -> int:
    """The version the manifest's own file/sha256 describe (default 1)."""
    from swap.models.registry import get_spec

    return int(getattr(get_spec(name), "version", 1) or 1)


def version_path(name: str, version: int, models_dir: Path) -> Path:
    """Where `version` of model `name` lives (whether or not it is installed)."""
    from swap.models.registry import get_spec

    spec = get_spec(name)
    nested = Path(models_dir) / name / str(version) / spec.file
    if nested.is_file() or version != manifest_version(name):
        return nested
    return Path(models_dir) / spec.file


def installed_versions(name: str, models_dir: Path) -> list[int]:
    """Every version of `name` present on disk, ascending."""
    from swap.models.registry import get_spec

    spec = get_spec(name)
    found = set()
    flat = Path(models_dir) / spec.file
    if flat.is_file() and flat.stat().st_size > 0:
        found.add(manifest_version(name))
    nested_root = Path(models_dir) / name
    if nested_root.is_dir():
        for child in nested_root.iterdir():
            if child.name.isdigit() and (child / spec.file).is_file():
                found.add(int(child.name))
    return sorted(found)


def load_state(models_dir: Path) -> dict[str, ModelRollout]:
    path = Path(models_dir) / STATE_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise VersionError(f"{path} is unreadable: {exc}") from None
    return {
        name: ModelRollout(
            stable=int(entry.get("stable", 1)),
            canary=int(entry["canary"]) if entry.get("canary") is not None else None,
            previous=[int(v) for v in entry.get("previous", [])],
        )
        for name, entry in data.items()
    }


def save_state(models_dir: Path, state: dict[str, ModelRollout]) -> None:
    """Atomic write: a worker reading the file mid-update sees the old or the new state, never half."""
    models_dir = Path(models_dir)
    models_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{STATE_FILE}.", dir=models_dir)
    with os.fdopen(fd, "w") as handle:
        json.dump({name: rollout.to_json() for name, rollout in sorted(state.items())}, handle, indent=2)
    os.replace(tmp, models_dir / STATE_FILE)


def rollout_for(name: str, models_dir: Path, state: dict[str, ModelRollout] | None = None) -> ModelRollout:
    state = load_state(models_dir) if state is None else state
    return state.get(name) or ModelRollout(stable=manifest_version(name))


def stable_version(name: str, models_dir: Path) -> int:
    return rollout_for(name, models_dir).stable


def _require_installed(name: str, version: int, models_dir: Path) -> None:
    if version not in installed_versions(name, models_dir):
        raise VersionError(
            f"{name} version {version} is not installed in {models_dir} "
            f"(install it with: python -m swap models install PATH --name {name} --version {version})"
        )


def start_canary(name: str, version: int, models_dir: Path) -> ModelRollout:
    state = load_state(models_dir)
    rollout = rollout_for(name, models_dir, state)
    _require_installed(name, version, models_dir)
    if version == rollout.stable:
        raise VersionError(f"{name} version {version} is already the stable version")
    rollout.canary = version
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
