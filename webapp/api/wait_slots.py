"""How many long-polls and event streams one user holds open at once (VISAGE_WAITS_PER_USER).

Each open wait is a lease in the user's Redis sorted set `visage:waits:user:<id>`, scored by when
the wait ends at the latest. One script call takes a slot or says when the first one frees (the
429's Retry-After). Leases are taken on the event loop, by the wait itself (webapp.api.waiting),
never by the view's sync part: a client that went away while that part ran on its thread cancelled
the request, the thread went on and took a slot nobody gave back (18 of 60 such long-polls).

A slot comes back three ways: the wait gives it back when it ends (its `finally`); under the ASGI
server, whatever a request still holds when it ends is given back then (`given_back_at_the_end`:
an event stream's response dropped before its body began, its client gone meanwhile, never runs
that `finally`); and a lease whose server died with it expires GRACE_S after its latest end.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import math
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

from django.conf import settings
from redis.exceptions import RedisError

from webapp.jobs import events

logger = logging.getLogger(__name__)

GRACE_S = 30  # past its latest end, a lease nobody removed (its server died) stops counting

# KEYS: leases. ARGV: now, end, lease, cap, grace. Returns {1} or {0, earliest end}.
_TAKE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[5]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, first[2]}
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
-- The key lives as long as its longest lease: a short wait taken after a long one must not cut it.
local ttl = math.ceil(tonumber(ARGV[2]) - tonumber(ARGV[1]) + tonumber(ARGV[5]))
if redis.call('TTL', KEYS[1]) < ttl then redis.call('EXPIRE', KEYS[1], ttl) end
return {1}
"""


@dataclass(frozen=True)
class Lease:
    key: str
    member: str


class TooManyWaits(Exception):
    def __init__(self, retry_after_s: int):
        super().__init__(f"too many open waits; one frees in {retry_after_s} s")
        self.retry_after_s = retry_after_s


# The leases the current request holds, while the ASGI server serves it (given_back_at_the_end).
_held: contextvars.ContextVar[set[Lease] | None] = contextvars.ContextVar("visage_wait_leases", default=None)


def leases_key(user_id: int) -> str:
    return f"visage:waits:user:{user_id}"


async def take(*, user_id: int, seconds: float) -> Lease | None:
    """A slot for a wait of at most `seconds`; raises TooManyWaits when the user's are all taken.
    None when Redis is down: the wait then ends at once anyway (it reads Redis), so it is let in."""
    now = time.time()
    lease = Lease(key=leases_key(user_id), member=uuid.uuid4().hex)
    held = _held.get()
    if held is not None:
        held.add(lease)  # before the script runs: a cancel during it still leaves a lease to give back
    script = asyncio.ensure_future(
        events.within(
            events.ANSWER_S,
            events.waiting_client().eval(
                _TAKE, 1, lease.key, now, now + seconds, lease.member, settings.WAITS_PER_USER, GRACE_S
            ),
        )
    )
    try:
        try:
            taken = await asyncio.shield(script)
        except asyncio.CancelledError:
            # Its client went away: the script is let finish first. Cut short, its connection is
            # dropped while Redis may still run it, after the request's end gave the lease back.
            await asyncio.wait([script])
            if not script.cancelled():
                script.exception()  # seen: a Redis error then is not logged as never retrieved
            raise
    except RedisError as exc:
        logger.warning("user %s: could not count open waits (Redis down?): %s", user_id, exc)
        if held is not None:
            # Nothing for the request's end to give back: a second try at a Redis that is down only
            # waits and warns again. A script that ran after all (an answer lost in a timeout) holds
            # one of the user's slots until its lease expires (the wait's length + GRACE_S).
            held.discard(lease)
        return None
    if int(taken[0]) != 1:
        if held is not None:
            held.discard(lease)
        raise TooManyWaits(retry_after_s=max(1, math.ceil(float(taken[1]) - now)))
    return lease


async def give_back(lease: Lease | None) -> None:
    """The wait is over (answered, timed out, or its client went away)."""
    if lease is not None:
        await _remove({lease})


@contextlib.asynccontextmanager
async def given_back_at_the_end() -> AsyncIterator[None]:
    """Around one request served by the ASGI server (webapp.asgi): the leases it still holds when it
    ends, however it ends, are given back."""
    held: set[Lease] = set()
    token = _held.set(held)
    try:
        yield
    finally:
        _held.reset(token)
        if held:
            await asyncio.shield(_remove(held))  # not cut short by a second cancel


async def _remove(leases: set[Lease]) -> None:
    by_key: dict[str, list[str]] = {}
    for lease in leases:
        by_key.setdefault(lease.key, []).append(lease.member)
    try:
        for key, members in by_key.items():
            await events.within(events.ANSWER_S, events.waiting_client().zrem(key, *members))
    except RedisError as exc:  # the leases expire by themselves
        logger.warning("could not give back a wait slot (Redis down?): %s", exc)
        return
    held = _held.get()
    if held is not None:
        held.difference_update(leases)
