"""Canaries with local inference: one onnxruntime session per version, picked per job.

When a model has a canary running (`python -m swap models canary`) as a worker builds its
pipeline, the adapter gets a `VersionedLocalSession`: the stable and the canary version both
loaded, and every run uses the version the job's routing chose (`swap.models.canary`), recorded
like Triton's sessions do. Without a canary the adapter gets the plain session, as before. A
canary started (or promoted) later reaches a worker when it restarts (workers recycle after
VISAGE_WORKER_MAX_JOBS jobs); Triton picks roll-outs up without restarts.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from swap.config import RuntimeOptions
from swap.inference.emap import read_emap
from swap.inference.sessions import get_session, share_pool_threads
from swap.models import canary, registry


def models_dir_of(name: str, path: Path) -> Path:
    """The models directory a version file of `name` lives in (see swap.models.registry)."""
    path = Path(path)
    if path.parent.name.isdigit() and path.parent.parent.name == name:
        return path.parents[2]
    return path.parent


def local_session(model_path: Path, runtime: RuntimeOptions, name: str):
    """The plain cached session, or a VersionedLocalSession while `name` has a canary installed."""
    try:
        registry.get_spec(name)
    except KeyError:  # not a manifest model (tests' ad-hoc names): no versions
        return get_session(model_path, runtime)
    models_dir = models_dir_of(name, model_path)
    rollout = registry.rollout_for(name, models_dir)
    installed = registry.installed_versions(name, models_dir)
    if rollout.canary is None or rollout.canary not in installed or rollout.stable not in installed:
        return get_session(model_path, runtime)
    paths = {v: registry.version_path(name, v, models_dir) for v in (rollout.stable, rollout.canary)}
    return VersionedLocalSession(name, rollout.stable, paths, runtime)


class VersionedLocalSession:
    """onnxruntime sessions of a model's stable and canary versions behind one session surface."""

    def __init__(self, name: str, stable: int, paths: dict[int, Path], runtime: RuntimeOptions) -> None:
        self.name = name
        self.stable = stable
        self.paths = paths
        self.sessions = {version: get_session(path, runtime) for version, path in paths.items()}
        share_pool_threads(self, list(self.sessions.values()))
        self._emaps: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()

    def version(self) -> int:
        routed = canary.version_for(self.name, self.stable)
        return routed if routed in self.sessions else self.stable

    def run(self, output_names, feeds):
        version = self.version()
        outputs = self.sessions[version].run(output_names, feeds)
        canary.record(self.name, version)
        return outputs

    def emap(self) -> np.ndarray:
        """inswapper's emap of the version this job runs."""
        version = self.version()
        with self._lock:
            if version not in self._emaps:
                self._emaps[version] = read_emap(self.paths[version])
            return self._emaps[version]

    def __getattr__(self, attribute: str):
        # get_inputs, get_outputs, get_providers…: the versions share the model's interface.
        return getattr(self.sessions[self.stable], attribute)
