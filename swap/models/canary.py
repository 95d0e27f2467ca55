"""Canary routing: which model versions a job runs, by a stable hash of its id.

A job's bucket is the first 8 bytes of SHA-256("visage-canary:" + job id) scaled to [0, 100):
the same job always lands in the same bucket (a retried job keeps its versions), buckets are
uniform, and raising the percentage only moves jobs from stable to canary, never back. A job
whose bucket is below VISAGE_CANARY_PERCENT runs the canary version of every model that has
one running (`swap.models.versions`), every other job the stable versions.

The worker opens `job_routing(job_id, ...)` around a job; inference sessions ask
`version_for(model)` and `record(model, version)` what actually ran, so the job can store it.
"""

from __future__ import annotations

import contextvars
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from swap.models import registry, versions

SALT = b"visage-canary:"


def bucket(job_id: object) -> float:
    """The job's position in [0, 100), a pure function of its id."""
    digest = hashlib.sha256(SALT + str(job_id).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 * 100.0


def is_canary(job_id: object, percent: float) -> bool:
    return bucket(job_id) < max(0.0, min(100.0, float(percent)))


def route(
    job_id: object,
    percent: float,
    state: dict[str, versions.ModelRollout],
) -> dict[str, int]:
    """{model: version} for every model in the roll-out state (others run their stable version).
    A model's own percentage (`models canary NAME VERSION --percent P`) overrides `percent`."""
    return {
        name: (
            rollout.canary
            if rollout.canary is not None
            and is_canary(job_id, percent if rollout.percent is None else rollout.percent)
            else rollout.stable
        )
        for name, rollout in state.items()
    }


@dataclass
class Routing:
    job_id: str
    canary: bool
    versions: dict[str, int]  # what the router chose (models with roll-out state)
    models_dir: Path | None = None
    used: dict[str, int] = field(default_factory=dict)  # what ran: filled by the sessions


_current: contextvars.ContextVar[Routing | None] = contextvars.ContextVar("model_routing", default=None)


@contextmanager
def job_routing(job_id: object, *, models_dir: Path, percent: float) -> Iterator[Routing]:
    # Read per job: a canary started, re-weighted or rolled back reaches the next job (no restart).
    state = versions.load_state(models_dir)
    chosen = route(job_id, percent, state)
    routing = Routing(
        job_id=str(job_id),
        canary=any(r.canary is not None and chosen[n] == r.canary for n, r in state.items()),
        versions=chosen,
        models_dir=Path(models_dir),
    )
    token = _current.set(routing)
    try:
        yield routing
    finally:
        _current.reset(token)


def current() -> Routing | None:
    return _current.get()


def version_for(name: str, default: int) -> int:
    """The version of `name` this job runs: the router's choice, else `default` (the stable one)."""
    routing = _current.get()
    if routing is None:
        return default
    return routing.versions.get(name, default)


def record(name: str, version: int) -> None:
    routing = _current.get()
    if routing is not None:
        routing.used[name] = int(version)


def versions_ran(
    routing: Routing | None, backends: dict[str, str | None], models_dir: Path
) -> dict[str, int]:
    """{model: version} a finished job ran, for its record.

    Sessions record what they ran on the routing (Triton's, and local ones while a canary runs).
    A model that recorded nothing in this task (a video job's join runs no model; a local model
    without a canary) reports the router's choice, which is its stable version unless the job is
    routed to a canary. dlib/classical backends have no versions and are left out.
    """
    ran = dict(routing.used) if routing is not None else {}
    for name in backends.values():
        if not name or name in ran:
            continue
        try:
            registry.get_spec(name)
        except KeyError:
            continue
        stable = registry.stable_version(name, models_dir)
        ran[name] = routing.versions.get(name, stable) if routing is not None else stable
    return ran
