"""RFC 9457 problem+json for every API error, with a stable machine `code` and per-field `errors`."""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import Http404
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from redis.exceptions import RedisError
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from swap.errors import InferenceUnavailable
from webapp.jobs.refusals import refusal_for
from webapp.media.storage import StorageError

PROBLEM_CONTENT_TYPE = "application/problem+json"
RETRY_AFTER_UNAVAILABLE_S = 30

logger = logging.getLogger(__name__)

# Titles for the codes a client will see, in the request's language (like `detail`; `code` stays as
# it is); also served at /errors/<code> for humans.
TITLES = {
    "validation_error": gettext_lazy("The request is invalid"),
    "invalid_option": gettext_lazy("An option has an invalid value"),
    "missing_file": gettext_lazy("A required file is missing"),
    "empty_file": gettext_lazy("A file is empty"),
    "file_too_large": gettext_lazy("A file is too large"),
    "image_too_large": gettext_lazy("An image has too many pixels"),
    "image_too_small": gettext_lazy("An image is too small"),
    "corrupt_image": gettext_lazy("A file could not be decoded"),
    "unsupported_media_type": gettext_lazy("A file type is not supported"),
    "video_too_long": gettext_lazy("A video is too long"),
    "too_many_frames": gettext_lazy("A video has too many frames"),
    "video_too_large": gettext_lazy("A video's frames are too large"),
    "video_too_small": gettext_lazy("A video's frames are too small"),
    "corrupt_video": gettext_lazy("A video could not be read"),
    "insufficient_credits": gettext_lazy("Not enough credits"),
    "idempotency_key_mismatch": gettext_lazy("Idempotency-Key reused with a different request"),
    "invalid_idempotency_key": gettext_lazy("The Idempotency-Key header is invalid"),
    "job_not_cancelable": gettext_lazy("The job cannot be canceled"),
    "not_authenticated": gettext_lazy("Authentication required"),
    "authentication_failed": gettext_lazy("Authentication failed"),
    "permission_denied": gettext_lazy("Permission denied"),
    "not_found": gettext_lazy("Not found"),
    "method_not_allowed": gettext_lazy("Method not allowed"),
    "not_acceptable": gettext_lazy("No acceptable response format"),
    "throttled": gettext_lazy("Too many requests"),
    "too_many_waits": gettext_lazy("Too many long-polls and event streams open at once"),
    "too_many_failed_logins": gettext_lazy("Too many failed sign-in attempts"),
    "unsupported_media_type_header": gettext_lazy("Unsupported request content type"),
    "parse_error": gettext_lazy("Malformed request"),
    "bad_request": gettext_lazy("Bad request"),
    "request_too_large": gettext_lazy("The request is too large"),
    "too_many_fields": gettext_lazy("The request has too many fields"),
    "too_many_files": gettext_lazy("The request has too many files"),
    "server_error": gettext_lazy("Internal server error"),
    "no_face_detected": gettext_lazy("No face detected"),
    "content_rejected": gettext_lazy("Content rejected by moderation"),
    "protected_identity": gettext_lazy("This person cannot be swapped"),
    "blocked_text": gettext_lazy("The image contains blocked text"),
    "invalid_image": gettext_lazy("An image could not be used"),
    "service_unavailable": gettext_lazy("Temporarily unavailable"),
    "consent_required": gettext_lazy("Consent to use the uploaded faces is required"),
    "share_links_disabled": gettext_lazy("Share links are turned off"),
    "job_not_shareable": gettext_lazy("This job cannot be shared"),
    "originals_deleted": gettext_lazy("The original uploads were deleted"),
    "payments_not_configured": gettext_lazy("Card payments are not available"),
    "payment_provider_error": gettext_lazy("The payment provider failed"),
    "upload_not_found": gettext_lazy("No such upload"),
    "upload_incomplete": gettext_lazy("The upload is missing parts"),
    "upload_not_ready": gettext_lazy("The upload cannot be used yet"),
    "checksum_mismatch": gettext_lazy("The uploaded file is not the one declared"),
    "access_token_expired": gettext_lazy("The access token has expired"),
    "invalid_refresh_token": gettext_lazy("Unknown refresh token"),
    "refresh_token_expired": gettext_lazy("The refresh token has expired"),
    "refresh_token_reused": gettext_lazy("The refresh token was already used"),
    "device_signed_out": gettext_lazy("This device was signed out"),
    "password_incorrect": gettext_lazy("The password is wrong"),
    "staff_account": gettext_lazy("Staff accounts are closed in the admin"),
    "account_closed": gettext_lazy("This account was deleted"),
}
# Every `code` a problem can carry: the OpenAPI schema's closed enum (webapp.api.schema).
PROBLEM_CODES = tuple(sorted(TITLES))


def problem_title(code: str) -> str:
    return str(TITLES[code]) if code in TITLES else code.replace("_", " ").capitalize()


def problem_type(request, code: str) -> str:
    path = f"/errors/{code.replace('_', '-')}"
    return request.build_absolute_uri(path) if request is not None else path


def problem_response(request, *, status_code: int, code: str, detail: str, errors: dict | None = None,
                     extra: dict | None = None, headers: dict | None = None) -> Response:
    body = {
        "type": problem_type(request, code),
        "title": problem_title(code),
        "status": status_code,
        "detail": detail,
        "code": code,
        "instance": request.get_full_path() if request is not None else None,
        "request_id": getattr(request, "request_id", None),
    }
    if errors:
        body["errors"] = errors
    if extra:
        body.update(extra)
    response = Response(body, status=status_code, headers=headers)
    response.content_type = PROBLEM_CONTENT_TYPE
    return response


def _flatten(detail) -> dict:
    if isinstance(detail, dict):
        return {field: [str(m) for m in (msgs if isinstance(msgs, list) else [msgs])] for field, msgs in detail.items()}
    return {"non_field_errors": [str(m) for m in (detail if isinstance(detail, list) else [detail])]}


def problem_exception_handler(exc, context):
    request = context.get("request")
    if isinstance(exc, StorageError | RedisError | OperationalError | InterfaceError | InferenceUnavailable):
        # A dependency is down: nothing was lost, the client should retry (never a 500). One answer
        # for every endpoint, so it comes before the jobs' own refusals (which word S3 for the site).
        logger.warning("dependency unavailable for %s: %s", getattr(request, "path", "?"), exc)
        return problem_response(
            request, status_code=503, code="service_unavailable",
            detail=_("A service this request needs is briefly unavailable; nothing was charged. Please retry shortly."),
            headers={"Retry-After": str(RETRY_AFTER_UNAVAILABLE_S)},
        )
    refusal = refusal_for(exc)
    if refusal is not None:
        return problem_response(
            request, status_code=refusal.status, code=refusal.code, detail=refusal.message,
            errors={refusal.field: [refusal.message]} if refusal.field else None,
            extra=exc.problem_extra(request) if refusal.top_up else None,
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = exception_handler(exc, context)
    if response is None:
        return None  # a real bug: let Django log it and answer 500
    if isinstance(exc, exceptions.ValidationError):
        errors = _flatten(exc.detail)
        first = next(iter(errors.items()))
        detail = f"{first[0]}: {first[1][0]}" if first[0] != "non_field_errors" else first[1][0]
        return problem_response(request, status_code=400, code="validation_error", detail=detail, errors=errors)
    code = getattr(exc, "default_code", "error")
    if isinstance(exc, exceptions.UnsupportedMediaType):
        code = "unsupported_media_type_header"
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    headers = {k: v for k, v in response.items() if k in ("Retry-After", "WWW-Authenticate", "Allow")}
    return problem_response(request, status_code=response.status_code, code=str(code), detail=str(detail),
                            headers=headers)


def error_doc(request, code: str):
    """/errors/<code>: the human page behind every problem's `type` URI."""
    key = code.replace("-", "_")
    if key not in TITLES:
        raise Http404("Unknown error code")
    return render(request, "webapp/error_doc.html", {"code": key, "title": problem_title(key)})
