"""The cache's Redis client is the process's: Django makes a cache object for every request (its
cache handler keeps one per context, and each request runs in a context of its own), and each
used to build its own client (options, a redis.Redis) on first use."""

from __future__ import annotations

import contextvars

from django.core.cache import caches


def test_every_request_context_uses_the_one_client_of_the_process():
    def client_in_a_new_context():
        cache = caches["default"]
        cache.set("visage-test-cache-clients", 1, timeout=5)
        return cache, cache._cache, cache._cache.get_client(write=True)

    first = contextvars.Context().run(client_in_a_new_context)  # as a request's own, fresh context
    second = contextvars.Context().run(client_in_a_new_context)
    assert first[0] is not second[0]  # Django's cache objects: one per context, as before
    assert first[1] is second[1] and first[2] is second[2]  # their client: the process's
    assert caches["default"].get("visage-test-cache-clients") == 1
