"""Request latency by URL pattern: `visage_http_request_duration_seconds{route, method, status_class}`.

Our own middleware rather than django-prometheus: one histogram observation per request with the
labels we need. bench/metrics_overhead.py measured the middleware alone (multiprocess mode, busy
2-core machine): +81 µs per request for this one, +1137 µs for django-prometheus's pair, which
records about ten series per request, each a locked write to the multiprocess files. The
route is the URL pattern Django resolved (`api/v1/jobs/<uuid:job_id>`), never the raw path, and
unknown methods become `other`, so label cardinality is bounded by the URLconf.
"""

from __future__ import annotations

import time

from asgiref.sync import iscoroutinefunction, markcoroutinefunction

from webapp.telemetry import metrics

METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


class HttpMetricsMiddleware:
    # Both modes: a sync-only middleware would make Django run the async views below on a thread.
    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request):
        if iscoroutinefunction(self):
            return self._acall(request)
        started = time.perf_counter()
        return self._observe(request, self.get_response(request), started)

    async def _acall(self, request):
        started = time.perf_counter()
        return self._observe(request, await self.get_response(request), started)

    @staticmethod
    def _observe(request, response, started: float):
        match = getattr(request, "resolver_match", None)
        route = (match.route or match.view_name or "unnamed") if match is not None else "unmatched"
        metrics.HTTP_REQUEST_DURATION.labels(
            route=metrics.bounded(route),
            method=request.method if request.method in METHODS else "other",
            status_class=f"{response.status_code // 100}xx",
        ).observe(time.perf_counter() - started)
        return response
