"""How many long-polls and event streams one user holds open at once (VISAGE_WAITS_PER_USER).

Each open wait is a lease in the user's Redis sorted set `visage:waits:user:<id>`, scored by when
the wait ends at the latest. The wait removes its lease when it ends; a lease whose server died
with it expires GRACE_S after that end by itself, so a crash can never keep a user's slots taken.
One script call takes a slot or says when the first one frees (the 429's Retry-After).
"""

from __future__ import annotations

import logging
import math
import threading
import time
import uuid
from dataclasses import dataclass

import redis
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


_client: redis.Redis | None = None
_client_lock = threading.Lock()


def _redis() -> redis.Redis:
    global _client
    with _client_lock:
        if _client is None:
            _client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
        return _client


def leases_key(user_id: int) -> str:
    return f"visage:waits:user:{user_id}"


def take(*, user_id: int, seconds: float) -> Lease | None:
    """A slot for a wait of at most `seconds`; raises TooManyWaits when the user's are all taken.
    None when Redis is down: the wait then ends at once anyway (it reads Redis), so it is let in."""
    now = time.time()
    lease = Lease(key=leases_key(user_id), member=uuid.uuid4().hex)
    try:
        taken = _redis().eval(
            _TAKE, 1, lease.key, now, now + seconds, lease.member, settings.WAITS_PER_USER, GRACE_S
        )
    except RedisError as exc:
        logger.warning("user %s: could not count open waits (Redis down?): %s", user_id, exc)
        return None
    if taken[0] != 1:
        raise TooManyWaits(retry_after_s=max(1, math.ceil(float(taken[1]) - now)))
    return lease


async def give_back(lease: Lease | None) -> None:
    """The wait is over (answered, timed out, or its client went away)."""
    if lease is None:
        return
    try:
        await events.waiting_client().zrem(lease.key, lease.member)
    except RedisError as exc:  # the lease expires by itself
        logger.warning("could not give back a wait slot (Redis down?): %s", exc)
