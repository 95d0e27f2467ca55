"""Failed sign-ins are limited per username and per client address (brute force).

Every password check of the API token endpoint, the site's /login/ and the admin login goes through
`authenticate_limited`. Failures are counted in the shared cache (Redis, the API throttles'
backend), in a window that starts at the first failure: after VISAGE_LOGIN_MAX_FAILURES_PER_USERNAME
failures for one username, or VISAGE_LOGIN_MAX_FAILURES_PER_IP from one address, further attempts
are refused without checking the password until the window ends. A successful sign-in clears its
username's count (not the address's: one valid account must not reset an attacker's address).
Usernames are counted case-folded, whether or not the account exists, so a lockout reveals nothing.

If Redis is down the limits fail open with a logged warning: the password check itself still
applies, and PBKDF2 keeps each guess expensive.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import authenticate
from django.core.cache import cache
from redis.exceptions import RedisError

from .client_ip import client_ip

logger = logging.getLogger(__name__)

_PREFIX = "visage:login-failures"


@dataclass(frozen=True)
class _Counter:
    key: str
    limit: int

    @property
    def until_key(self) -> str:
        return f"{self.key}:until"


class LoginLocked(Exception):
    """Too many failed sign-ins for this username or from this address."""

    def __init__(self, *, retry_after_s: int, scope: str):
        self.retry_after_s = retry_after_s
        self.scope = scope  # "username" or "address"
        minutes = max(1, math.ceil(retry_after_s / 60))
        who = "for this account" if scope == "username" else "from your network address"
        self.message = (
            f"Too many failed sign-in attempts {who}. Try again in {minutes} minute{'s' if minutes != 1 else ''}, "
            "or reset your password."
        )
        super().__init__(self.message)


def _username_counter(username: str) -> _Counter:
    digest = hashlib.sha256(username.strip().casefold().encode()).hexdigest()[:32]
    return _Counter(f"{_PREFIX}:username:{digest}", settings.LOGIN_MAX_FAILURES_PER_USERNAME)


def _address_counter(address: str) -> _Counter:
    return _Counter(f"{_PREFIX}:address:{address or 'unknown'}", settings.LOGIN_MAX_FAILURES_PER_IP)


def _seconds_locked(counter: _Counter, values: dict, now: float) -> int:
    if counter.limit <= 0 or int(values.get(counter.key) or 0) < counter.limit:
        return 0
    until = float(values.get(counter.until_key) or now + settings.LOGIN_FAILURE_WINDOW_S)
    return max(1, math.ceil(until - now))


def _check(counters: list[_Counter]) -> None:
    now = time.time()
    values = cache.get_many([k for c in counters for k in (c.key, c.until_key)])
    for counter, scope in zip(counters, ("username", "address"), strict=True):
        seconds = _seconds_locked(counter, values, now)
        if seconds:
            raise LoginLocked(retry_after_s=seconds, scope=scope)


def _record_failure(counter: _Counter) -> None:
    window_s = settings.LOGIN_FAILURE_WINDOW_S
    cache.add(counter.until_key, time.time() + window_s, window_s)  # the window starts at the first failure
    cache.add(counter.key, 0, window_s)
    try:
        cache.incr(counter.key)  # atomic in Redis: parallel guesses are all counted
    except ValueError:  # the window ended between add and incr
        cache.set(counter.key, 1, window_s)


def authenticate_limited(request, *, username: str, password: str):
    """The user for these credentials, or None; raises LoginLocked when the limits are reached.

    The attempt that reaches a limit is itself answered with LoginLocked, so the user learns at once.
    """
    counters = [_username_counter(username), _address_counter(client_ip(request))]
    try:
        _check(counters)
    except RedisError as exc:
        logger.warning("login limits unavailable (cache down), checking the password without them: %s", exc)
        return authenticate(request, username=username, password=password)
    user = authenticate(request, username=username, password=password)
    try:
        if user is not None:
            cache.delete_many([counters[0].key, counters[0].until_key])
            return user
        for counter in counters:
            _record_failure(counter)
        _check(counters)
    except RedisError as exc:
        logger.warning("login limits unavailable (cache down), failure not counted: %s", exc)
    return user


def login_failures(*, username: str | None = None, address: str | None = None) -> int:
    """Failed sign-ins counted now for a username or an address (for the admin)."""
    counter = _username_counter(username) if username is not None else _address_counter(address or "")
    return int(cache.get(counter.key) or 0)


def login_unlock(*, username: str | None = None, address: str | None = None) -> int:
    """Clear the failure count of a username and/or an address; returns the failures cleared."""
    counters = ([_username_counter(username)] if username is not None else []) + (
        [_address_counter(address)] if address is not None else []
    )
    cleared = sum(int(cache.get(c.key) or 0) for c in counters)
    cache.delete_many([k for c in counters for k in (c.key, c.until_key)])
    return cleared
