"""The Redis cache, failing open: when Redis is down a read is a miss and a write is dropped,
with a warning in the log, instead of a 500 on every request.

The cache only holds rate-limit counters and other things that can be recomputed; losing them
for the length of an outage lets requests through unthrottled (logged), which is better than
refusing every request. Jobs never depend on it: their state lives in the database.
"""

from __future__ import annotations

import logging
import time

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

WARN_EVERY_S = 30.0


class FailOpenRedisCache(RedisCache):
    _last_warning = 0.0

    def _down(self, operation: str, exc: Exception):
        now = time.monotonic()
        if now - FailOpenRedisCache._last_warning > WARN_EVERY_S:
            FailOpenRedisCache._last_warning = now
            logger.warning("cache %s failed, continuing without the cache (Redis down?): %s", operation, exc)

    def get(self, key, default=None, version=None):
        try:
            return super().get(key, default, version)
        except RedisError as exc:
            self._down("get", exc)
            return default

    def get_many(self, keys, version=None):
        try:
            return super().get_many(keys, version)
        except RedisError as exc:
            self._down("get_many", exc)
            return {}

    def set(self, key, value, timeout=None, version=None):
        try:
            return super().set(key, value, timeout, version)
        except RedisError as exc:
            self._down("set", exc)

    def add(self, key, value, timeout=None, version=None):
        try:
            return super().add(key, value, timeout, version)
        except RedisError as exc:
            self._down("add", exc)
            return False

    def delete(self, key, version=None):
        try:
            return super().delete(key, version)
        except RedisError as exc:
            self._down("delete", exc)
            return False

    def incr(self, key, delta=1, version=None):
        try:
            return super().incr(key, delta, version)
        except RedisError as exc:
            self._down("incr", exc)
            return delta
