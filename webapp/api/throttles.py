"""Per-user budgets: creating jobs is dearer than reading them. 429s carry Retry-After and RateLimit headers.

Every API view is throttled: ReadThrottle and ScopedThrottle are the defaults
(REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]), so a view without its own throttles, such as the
billing app's, has the read budget and, when it names a `throttle_scope` (the CSV export), that
scope's budget too. Anonymous callers are counted by address (VISAGE_TRUSTED_PROXIES).
"""

from __future__ import annotations

from rest_framework.throttling import ScopedRateThrottle, SimpleRateThrottle, UserRateThrottle


class _Headers:
    def allow_request(self, request, view):
        allowed = super().allow_request(request, view)
        if getattr(self, "rate", None) and getattr(self, "history", None) is not None:
            remaining = max(0, self.num_requests - len(self.history))
            # On the Django request: ProblemJsonMiddleware adds them to every API response.
            getattr(request, "_request", request).ratelimit_headers = {
                "RateLimit-Policy": f'"{self.scope}";q={self.num_requests};w={int(self.duration)}',
                "RateLimit": f'"{self.scope}";r={remaining};t={int(self.wait() or 0) if not allowed else 0}',
            }
        return allowed


class _Budget(_Headers, UserRateThrottle):
    pass


class JobCreateThrottle(_Budget):
    scope = "job_create"


class ReadThrottle(_Budget):
    scope = "read"


class FacesThrottle(_Budget):
    """Face detection costs real CPU on the web server: its own, smaller budget."""

    scope = "faces"


class ScopedThrottle(_Headers, ScopedRateThrottle):
    """A view's own `throttle_scope` budget (e.g. "export"), on top of the read budget."""


class AuthThrottle(SimpleRateThrottle):
    scope = "auth"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
