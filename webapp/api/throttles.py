"""Per-user budgets: creating jobs is dearer than reading them. 429s carry Retry-After and RateLimit headers."""

from __future__ import annotations

from rest_framework.throttling import SimpleRateThrottle, UserRateThrottle


class _Budget(UserRateThrottle):
    def allow_request(self, request, view):
        allowed = super().allow_request(request, view)
        if self.rate and getattr(self, "history", None) is not None:
            remaining = max(0, self.num_requests - len(self.history))
            request.ratelimit_headers = {
                "RateLimit-Policy": f'"{self.scope}";q={self.num_requests};w={int(self.duration)}',
                "RateLimit": f'"{self.scope}";r={remaining};t={int(self.wait() or 0) if not allowed else 0}',
            }
        return allowed


class JobCreateThrottle(_Budget):
    scope = "job_create"


class ReadThrottle(_Budget):
    scope = "read"


class AuthThrottle(SimpleRateThrottle):
    scope = "auth"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
