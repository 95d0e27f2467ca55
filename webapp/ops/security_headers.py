"""Content-Security-Policy for the site's pages (and the public share pages).

A face-swap result page is exactly where an injected script would do harm (a session riding on a
stolen result, a swapped share page), so the site's HTML only runs scripts from our own origin plus
the one inline line in base.html that flips `no-js` before first paint (allowed by its hash).
Images and video come from our origin or the S3 endpoint that presigned URLs point at. Styles keep
'unsafe-inline' for the `style=""` attributes of progress bars and the compare slider (no script
can run from a style). The admin and the API docs page are staff/developer pages with their own
inline scripts; API answers are JSON and carry no policy.
"""

from __future__ import annotations

import base64
import hashlib

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings

# The inline script in templates/base.html, byte for byte (tests/webapp/ops/test_security_headers.py
# fails when the template's copy differs).
NO_JS_SNIPPET = 'document.documentElement.classList.replace("no-js", "js")'
EXEMPT_PREFIXES = ("/admin/", "/api/")


def _script_hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def storage_origin() -> str:
    if settings.S3_PUBLIC_URL:
        return settings.S3_PUBLIC_URL
    return f"{'https' if settings.S3_SECURE else 'http'}://{settings.S3_ENDPOINT}"


def site_policy() -> str:
    media = f"'self' data: blob: {storage_origin()}"
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self' {_script_hash(NO_JS_SNIPPET)}",
            "style-src 'self' 'unsafe-inline'",
            f"img-src {media}",
            f"media-src {media}",
            "connect-src 'self' blob:",  # the upload page's own previews (object URLs)
            "object-src 'none'",
            "base-uri 'self'",
            "frame-ancestors 'none'",
        ]
    )


class ContentSecurityPolicyMiddleware:
    # Both modes: a sync-only middleware would make Django run the async (waiting) views on a thread.
    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = site_policy()
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request):
        if iscoroutinefunction(self):
            return self._acall(request)
        return self._with_policy(request, self.get_response(request))

    async def _acall(self, request):
        return self._with_policy(request, await self.get_response(request))

    def _with_policy(self, request, response):
        if (
            response.get("Content-Type", "").startswith("text/html")
            and not request.path.startswith(EXEMPT_PREFIXES)
            and "Content-Security-Policy" not in response
        ):
            response["Content-Security-Policy"] = self.policy
        return response
