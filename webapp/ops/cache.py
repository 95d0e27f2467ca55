"""The Redis cache, failing open: when Redis is down a read is a miss and a write is dropped,
with a warning in the log, instead of a 500 on every request.

The cache only holds rate-limit counters and other things that can be recomputed; losing them
for the length of an outage lets requests through unthrottled (logged), which is better than
refusing every request. Jobs never depend on it: their state lives in the database.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

WARN_EVERY_S = 30.0


# The process's connection pools, one per server and options: shared by every cache object.
_pools: dict[str, object] = {}
_pools_lock = threading.Lock()


class _ReusedClients(RedisCacheClient):
    """Django makes a new redis.Redis (a pool-backed handle) for every cache call, and building one
    costs more than the call (~0.1 ms). One per pool, made once, is the same thing: redis.Redis is
    thread-safe and takes a connection from the pool per command.

    The pools are the process's, not this object's: Django makes a cache object per thread, and
    under ASGI every request runs on a thread of its own, so a pool per object opened new Redis
    connections for every request, closed only when the garbage collector got to them (one web
    process held 90 in bench/scaleout.py). A shared pool keeps at most one connection per request
    running at once (WEB_THREADS) and reuses them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def _get_connection_pool(self, write):
        server = self._servers[self._get_connection_pool_index(write)]
        key = repr((server, self._pool_class, sorted(self._pool_options.items())))
        with _pools_lock:
            if key not in _pools:
                _pools[key] = self._pool_class.from_url(server, **self._pool_options)
            return _pools[key]

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients.setdefault(id(pool), self._client(connection_pool=pool))
        return client


# The process's cache clients, one per server list and options: Django makes a cache object for
# every request (its cache handler is per context, and each request runs in a context of its own),
# and building its client (options, pools, a redis.Redis) each time was ~4 % of a status GET's CPU.
_clients: dict[str, _ReusedClients] = {}


class FailOpenRedisCache(RedisCache):
    _last_warning = 0.0

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _ReusedClients

    @property
    def _cache(self) -> _ReusedClients:
        key = repr((self._servers, sorted(self._options.items())))
        client = _clients.get(key)
        if client is None:
            with _pools_lock:
                client = _clients.setdefault(key, self._class(self._servers, **self._options))
        return client

    def _down(self, operation: str, exc: Exception):
        now = time.monotonic()
        if now - FailOpenRedisCache._last_warning > WARN_EVERY_S:
            FailOpenRedisCache._last_warning = now
            logger.warning("cache %s failed, continuing without the cache (Redis down?): %s", operation, exc)

    def _fail_open(self, operation: str, call, fallback):
        try:
            return call()
        except RedisError as exc:
            self._down(operation, exc)
            return fallback

    def get(self, key, default=None, version=None):
        return self._fail_open("get", lambda: super(FailOpenRedisCache, self).get(key, default, version), default)

    def get_many(self, keys, version=None):
        return self._fail_open("get_many", lambda: super(FailOpenRedisCache, self).get_many(keys, version), {})

    def set(self, key, value, timeout=None, version=None):
        return self._fail_open("set", lambda: super(FailOpenRedisCache, self).set(key, value, timeout, version), None)

    def set_many(self, data, timeout=None, version=None):
        # Django's contract: the keys that could not be stored.
        return self._fail_open(
            "set_many", lambda: super(FailOpenRedisCache, self).set_many(data, timeout, version), list(data)
        )

    def add(self, key, value, timeout=None, version=None):
        return self._fail_open("add", lambda: super(FailOpenRedisCache, self).add(key, value, timeout, version), False)

    def delete(self, key, version=None):
        return self._fail_open("delete", lambda: super(FailOpenRedisCache, self).delete(key, version), False)

    def delete_many(self, keys, version=None):
        return self._fail_open("delete_many", lambda: super(FailOpenRedisCache, self).delete_many(keys, version), None)

    def incr(self, key, delta=1, version=None):
        return self._fail_open("incr", lambda: super(FailOpenRedisCache, self).incr(key, delta, version), delta)

    def sliding_window(self, key: str, *, limit: int, window_s: float, now: float) -> tuple[bool, int, float]:
        """Count one request against `limit` requests in any `window_s` seconds, in one round trip.

        Returns (allowed, requests in the window including this one if allowed, seconds until the
        next request would be allowed: 0 when allowed). A refused request is not counted. When
        Redis is down the request is allowed (logged), like every other cache operation here.
        """
        client = self._cache.get_client(key, write=True)
        script = (_SLIDING_WINDOW, 1, self.make_and_validate_key(key), int(now * 1000), int(window_s * 1000),
                  limit, f"{now!r}:{secrets.token_hex(4)}")
        allowed, count, wait_ms = self._fail_open("sliding_window", lambda: client.eval(*script), (1, 0, 0))
        return bool(allowed), int(count), int(wait_ms) / 1000


# A sorted set of request times (ms) per key: drop those older than the window, count, then add
# this one if under the limit. The same answer as a list of timestamps, without moving the list.
_SLIDING_WINDOW = """
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, count + 1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, count, math.max(1, tonumber(oldest[2]) + window - now)}
"""
