"""The API's documentation pages (Swagger UI, ReDoc) load only from this server.

Their JavaScript and CSS come from drf-spectacular-sidecar's static files; this policy also stops
the few outside fetches the bundles make on their own (ReDoc's attribution logo), so the pages
behave the same with or without internet access.
"""

from __future__ import annotations

from functools import wraps

DOCS_CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline' blob:",  # the inline init script; ReDoc's search worker
        "worker-src 'self' blob:",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
    ]
)


def same_origin_only(view):
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response["Content-Security-Policy"] = DOCS_CONTENT_SECURITY_POLICY
        return response

    return wrapped
