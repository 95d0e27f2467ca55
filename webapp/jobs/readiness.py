"""Whether the workers that take jobs have started, as they say it in Redis: the site and the API
tell a user "the engine is warming up, ready in about N s" instead of leaving a first job silent.

Two roles take a job's steps: "screening" (the moderation queue) and "swap" (the GPU queues). A
worker of a role marks itself warming (a key with a TTL, so one that dies while loading stops
counting) when it starts loading its models, and clears the mark when RQ has registered it: from
then on RQ's own worker registry says the role is ready. How long a warm-up lasts is learned from
the last one on this install (kept in Redis), else the shipped estimate below.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass

from django.conf import settings
from rq import worker_registration
from rq.utils import as_text

from . import dispatch
from .choices import JobState

logger = logging.getLogger(__name__)

SCREENING = "screening"
SWAP = "swap"
# Seconds from a worker's start to its first job on a fresh install (no earlier warm-up measured):
# measured on a 2-core machine with `make run`'s other processes starting beside it.
SHIPPED_WARMUP_S = {SCREENING: 12.0, SWAP: 8.0}
# A warming mark outlives a slow warm-up by this much; a worker that died while loading stops
# counting as warming after it.
WARMING_TTL_MIN_S = 120


@dataclass(frozen=True)
class RoleState:
    ready: bool  # a worker of this role is registered and taking jobs
    warming: bool  # none is ready, and one is loading its models
    ready_in_s: int | None  # while warming: about how long until one is ready (None: any moment now)


def role_queues(role: str) -> list[str]:
    return [settings.MODERATION_QUEUE] if role == SCREENING else list(settings.GPU_QUEUES)


def roles_of(queue_names: list[str]) -> list[str]:
    """The roles a worker listening on these queues takes (a webhook worker has none)."""
    return [role for role in (SCREENING, SWAP) if set(role_queues(role)) & set(queue_names)]


def _connection():
    return dispatch.rq_connection(role_queues(SWAP)[0])


def _warming_key(role: str) -> str:
    """A hash: worker name → {started_at, expected_s, expires_at} of each worker of the role that is
    loading its models."""
    return f"visage:engine:warming:{role}"


def _took_key(role: str) -> str:
    return f"visage:engine:warmup-seconds:{role}"


def expected_warmup_s(role: str) -> float:
    """How long this role's last warm-up took on this install, else the shipped estimate."""
    try:
        raw = _connection().get(_took_key(role))
        return float(raw) if raw else SHIPPED_WARMUP_S[role]
    except Exception:
        logger.debug("could not read the last warm-up time", exc_info=True)
        return SHIPPED_WARMUP_S[role]


def mark_warming(role: str, worker: str, *, started_at: float) -> None:
    """`worker` (a name unique among live workers) started loading at `started_at` (epoch seconds)."""
    expected_s = expected_warmup_s(role)
    ttl_s = int(max(WARMING_TTL_MIN_S, 4 * expected_s))
    body = json.dumps({"started_at": started_at, "expected_s": expected_s, "expires_at": time.time() + ttl_s})
    connection = _connection()
    connection.hset(_warming_key(role), worker, body)
    connection.expire(_warming_key(role), ttl_s)


def mark_ready(role: str, worker: str, *, took_s: float) -> None:
    """The worker is registered with RQ and takes jobs; the next warm-up is expected to take as long."""
    connection = _connection()
    connection.set(_took_key(role), f"{took_s:.1f}")
    connection.hdel(_warming_key(role), worker)


def clear_warming(role: str, worker: str) -> None:
    """The worker stopped while loading (its supervisor starts another, under another name)."""
    _connection().hdel(_warming_key(role), worker)


def role_state(role: str, *, now: float | None = None) -> RoleState:
    """Where a role stands; an unknown state (Redis trouble, no worker at all) is neither ready nor
    warming, and the site says nothing about it."""
    return role_states([role], now=now)[role]


def role_states(roles: list[str], *, now: float | None = None) -> dict[str, RoleState]:
    """`role_state` of each role, read in two Redis round trips whatever the roles and queues: RQ's
    per-queue worker sets and the warming marks, then whether each worker's (TTL-bound) key is
    still there, so a worker that died without unregistering stops counting when its key expires.
    Reads no worker's data (Worker.all would load every worker's: ~4 ms a call on the 2-core CI
    machine). A job's submit and every read of a waiting job ask this (was 4 + 2 round trips)."""
    now = time.time() if now is None else now
    unknown = RoleState(ready=False, warming=False, ready_in_s=None)
    try:
        connection = _connection()
        first = connection.pipeline(transaction=False)
        for role in roles:
            for name in role_queues(role):
                first.smembers(worker_registration.WORKERS_BY_QUEUE_KEY % name)
            first.hvals(_warming_key(role))
        replies = iter(first.execute())
        members: dict[str, set[str]] = {}
        marks: dict[str, list[dict]] = {}
        for role in roles:
            members[role] = {as_text(m) for name in role_queues(role) for m in next(replies)}
            marks[role] = [json.loads(raw) for raw in next(replies)]
        workers = sorted(set().union(*members.values()))
        second = connection.pipeline(transaction=False)
        for key in workers:
            second.exists(key)
        alive = {key for key, exists in zip(workers, second.execute() if workers else [], strict=True) if exists}
    except Exception:  # a hint for the user; Redis trouble must not break a page
        logger.debug("could not read the workers' readiness", exc_info=True)
        return dict.fromkeys(roles, unknown)
    states = {}
    for role in roles:
        live_marks = [mark for mark in marks[role] if mark["expires_at"] > now]  # not of workers that died loading
        if members[role] & alive:
            states[role] = RoleState(ready=True, warming=False, ready_in_s=None)
        elif not live_marks:
            states[role] = unknown
        else:
            # The first of them to be ready takes the job.
            left_s = min(mark["started_at"] + mark["expected_s"] - now for mark in live_marks)
            states[role] = RoleState(ready=False, warming=True, ready_in_s=round(left_s) if left_s >= 1 else None)
    return states


@dataclass(frozen=True)
class WarmingUp:
    ready_in_s: int | None  # None: any moment now


def warming_up(roles: list[str]) -> WarmingUp | None:
    """Whether the workers these roles need are still warming up (None: they are not, or no one
    knows); the wait is the longest of theirs (they load side by side)."""
    warming = [state for state in role_states(roles).values() if state.warming]
    if not warming:
        return None
    waits = [state.ready_in_s for state in warming]
    return WarmingUp(ready_in_s=None if None in waits else max(waits))


def roles_needed(state: str) -> list[str]:
    """The roles a job in this state still waits for."""
    if state in (JobState.CREATED, JobState.SCREENING):
        return [SCREENING, SWAP]
    if state == JobState.QUEUED:
        return [SWAP]
    return []


def all_ready() -> bool:
    return all(state.ready for state in role_states([SCREENING, SWAP]).values())
