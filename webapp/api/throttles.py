"""Per-user budgets: creating jobs is dearer than reading them. 429s carry Retry-After and RateLimit headers.

Every API view is throttled: ReadThrottle and ScopedThrottle are the defaults
(REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]), so a view without its own throttles, such as the
billing app's, has the read budget and, when it names a `throttle_scope` (the CSV export), that
scope's budget too. Anonymous callers are counted by address (VISAGE_TRUSTED_PROXIES).

A budget is "N requests in any window of the rate's length" (DRF's rule), counted in a Redis
sorted set by one script call per request (`FailOpenRedisCache.sliding_window`) instead of DRF's
read-modify-write of a pickled list of every request time.
"""

from __future__ import annotations

from rest_framework.throttling import ScopedRateThrottle, SimpleRateThrottle, UserRateThrottle


class _SlidingWindow(SimpleRateThrottle):
    retry_after_s: float = 0.0

    def allow_request(self, request, view):
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        allowed, count, self.retry_after_s = self.cache.sliding_window(
            self.key, limit=self.num_requests, window_s=self.duration, now=self.timer()
        )
        # On the Django request: ProblemJsonMiddleware adds them to every API response.
        getattr(request, "_request", request).ratelimit_headers = {
            "RateLimit-Policy": f'"{self.scope}";q={self.num_requests};w={int(self.duration)}',
            "RateLimit": f'"{self.scope}";r={max(0, self.num_requests - count)};t={int(self.retry_after_s + 0.999)}',
        }
        return allowed

    def wait(self):
        return self.retry_after_s


class _Budget(UserRateThrottle, _SlidingWindow):
    pass


class JobCreateThrottle(_Budget):
    scope = "job_create"


class ReadThrottle(_Budget):
    scope = "read"


class FacesThrottle(_Budget):
    """Face detection costs real CPU on the web server: its own, smaller budget."""

    scope = "faces"


class ScopedThrottle(ScopedRateThrottle, _SlidingWindow):
    """A view's own `throttle_scope` budget (e.g. "export"), on top of the read budget."""


class AuthThrottle(_SlidingWindow):
    scope = "auth"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
