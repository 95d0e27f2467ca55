"""A NUL character in a query string or a URL-encoded form is refused with a 400 before any view.

No value the site or the API takes can hold one, and PostgreSQL refuses it in text: a view that
passed one to a query (a search, a session id, a note) answered 500. Django's forms and DRF's
serializers already refuse NUL in their fields; this covers values views read themselves. JSON
and multipart bodies are left to those fields (a file may hold any byte).
"""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponseBadRequest
from django.utils.translation import gettext as _

from webapp.serving import API_PREFIX

from .middleware import problem_http_response

FORM_TYPE = "application/x-www-form-urlencoded"


def _has_nul(request) -> bool:
    if "%00" in request.META.get("QUERY_STRING", ""):
        return True
    if request.method == "POST" and request.content_type == FORM_TYPE:
        try:
            body = request.body
        except RequestDataTooBig:  # the view reading it answers that (413 under /api/)
            return False
        return b"%00" in body or b"\x00" in body
    return False


def _refusal(request):
    detail = _("The request contains a NUL character, which no field accepts.")
    if request.path.startswith(API_PREFIX):
        return problem_http_response(request, status_code=400, code="bad_request", detail=detail)
    return HttpResponseBadRequest(detail, content_type="text/plain; charset=utf-8")


class RefuseNulMiddleware:
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
        return _refusal(request) if _has_nul(request) else self.get_response(request)

    async def _acall(self, request):
        return _refusal(request) if _has_nul(request) else await self.get_response(request)
