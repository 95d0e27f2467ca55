"""Every error under /api/ is RFC 9457 problem+json, also those Django answers before or around DRF.

DRF's exception handler (problems.py) covers errors inside API views. Django itself answers some
requests with HTML: a path no route matches (`/api/v1/jobs/1`), request parsing limits
(`RequestDataTooBig`, `TooManyFieldsSent`, `TooManyFilesSent`, raised when a view first reads the
body), a 405 or 500 outside DRF. This middleware, just inside RequestIdMiddleware, refuses bodies
over the largest request the API can accept before anything reads them (413), maps those parsing
exceptions to specific codes, and turns any other non-JSON error response under /api/ into a
problem with the same status (the exception itself is still logged by Django first).

Its problems are worded in the request's language like every other (`title`, `detail`; Content-Language
says which): it picks the language itself, as it answers some requests before LocaleMiddleware runs.
"""

from __future__ import annotations

import json

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.core.exceptions import DisallowedHost, RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpResponse
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from webapp.serving import API_PREFIX, max_request_bytes

from .problems import PROBLEM_CONTENT_TYPE, problem_title

# Headers of the original error response that stay meaningful on the problem.
KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate")
STATUS_CODES = {
    400: ("bad_request", gettext_lazy("The request could not be understood.")),
    401: ("not_authenticated", gettext_lazy("Authentication credentials were not provided.")),
    403: ("permission_denied", gettext_lazy("You do not have permission to perform this action.")),
    404: ("not_found", gettext_lazy("No API endpoint or resource at this URL.")),
    405: ("method_not_allowed", gettext_lazy("This method is not allowed on this URL.")),
    413: ("request_too_large", gettext_lazy("The request body is too large.")),
    500: ("server_error", gettext_lazy("An unexpected error occurred; the request_id identifies it in our logs.")),
    503: ("service_unavailable", gettext_lazy("A service the API depends on is unavailable; try again shortly.")),
}


def problem_http_response(request, *, status_code: int, code: str, detail: str,
                          headers: dict | None = None) -> HttpResponse:
    """A problem+json response built without DRF (for the middleware, outside any API view)."""
    path = f"/errors/{code.replace('_', '-')}"
    try:
        type_uri = request.build_absolute_uri(path)
    except DisallowedHost:
        type_uri = path
    body = {
        "type": type_uri,
        "title": problem_title(code),
        "status": status_code,
        "detail": str(detail),
        "code": code,
        "instance": request.get_full_path(),
        "request_id": getattr(request, "request_id", None),
    }
    response = HttpResponse(json.dumps(body, ensure_ascii=False), status=status_code, content_type=PROBLEM_CONTENT_TYPE,
                            headers=headers)
    response["Content-Language"] = translation.get_language()
    patch_vary_headers(response, ("Accept-Language",))
    return response


def _is_json(response) -> bool:
    content_type = (response.get("Content-Type") or "").split(";")[0].strip().lower()
    return content_type == "application/json" or content_type.endswith("+json")


class ProblemJsonMiddleware:
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
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        translation.activate(translation.get_language_from_request(request))
        too_large = self._refuse_oversized(request)
        if too_large is not None:
            return too_large
        return self._as_problem(request, self.get_response(request))

    async def _acall(self, request):
        if not request.path.startswith(API_PREFIX):
            return await self.get_response(request)
        translation.activate(translation.get_language_from_request(request))
        too_large = self._refuse_oversized(request)
        if too_large is not None:
            return too_large
        return self._as_problem(request, await self.get_response(request))

    @staticmethod
    def _as_problem(request, response):
        for header, value in getattr(request, "ratelimit_headers", {}).items():  # set by api/throttles.py
            response.setdefault(header, value)
        if response.status_code < 400 or _is_json(response):
            return response
        code, detail = STATUS_CODES.get(
            response.status_code, ("server_error" if response.status_code >= 500 else "bad_request", "")
        )
        headers = {name: response[name] for name in (*KEPT_HEADERS, "RateLimit", "RateLimit-Policy") if name in response}
        return problem_http_response(request, status_code=response.status_code, code=code,
                                     detail=detail or response.reason_phrase, headers=headers)

    def process_exception(self, request, exception):
        if not request.path.startswith(API_PREFIX):
            return None
        if isinstance(exception, RequestDataTooBig):
            return problem_http_response(
                request, status_code=413, code="request_too_large",
                detail=_("The form fields are larger than %(limit)d bytes (files are not counted).")
                % {"limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE},
            )
        if isinstance(exception, TooManyFieldsSent):
            return problem_http_response(
                request, status_code=400, code="too_many_fields",
                detail=_("The request has more than %(limit)d fields.") % {"limit": settings.DATA_UPLOAD_MAX_NUMBER_FIELDS},
            )
        if isinstance(exception, TooManyFilesSent):
            return problem_http_response(
                request, status_code=400, code="too_many_files",
                detail=_("The request has more than %(limit)d files.") % {"limit": settings.DATA_UPLOAD_MAX_NUMBER_FILES},
            )
        return None

    @staticmethod
    def _refuse_oversized(request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return problem_http_response(request, status_code=400, code="bad_request",
                                         detail=_("The Content-Length header is not a number."))
        content_type = request.META.get("CONTENT_TYPE", "")
        limit = max_request_bytes() if content_type.startswith("multipart/") else settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if length > limit:
            return problem_http_response(
                request, status_code=413, code="request_too_large",
                detail=(
                    _("The request body is %(length)d bytes; the limit is %(limit)d bytes.")
                    if content_type.startswith("multipart/")
                    else _("The request body is %(length)d bytes; the limit is %(limit)d bytes for this content type.")
                ) % {"length": length, "limit": limit},
            )
        return None
