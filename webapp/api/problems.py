"""RFC 9457 problem+json for every API error, with a stable machine `code` and per-field `errors`."""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import Http404
from django.shortcuts import render
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

# Titles for the codes a client will see; also served at /errors/<code> for humans.
TITLES = {
    "validation_error": "The request is invalid",
    "invalid_option": "An option has an invalid value",
    "missing_file": "A required file is missing",
    "empty_file": "A file is empty",
    "file_too_large": "A file is too large",
    "image_too_large": "An image has too many pixels",
    "image_too_small": "An image is too small",
    "corrupt_image": "A file could not be decoded",
    "unsupported_media_type": "A file type is not supported",
    "video_too_long": "A video is too long",
    "too_many_frames": "A video has too many frames",
    "video_too_large": "A video's frames are too large",
    "video_too_small": "A video's frames are too small",
    "corrupt_video": "A video could not be read",
    "insufficient_credits": "Not enough credits",
    "idempotency_key_mismatch": "Idempotency-Key reused with a different request",
    "invalid_idempotency_key": "The Idempotency-Key header is invalid",
    "job_not_cancelable": "The job cannot be canceled",
    "not_authenticated": "Authentication required",
    "authentication_failed": "Authentication failed",
    "permission_denied": "Permission denied",
    "not_found": "Not found",
    "method_not_allowed": "Method not allowed",
    "not_acceptable": "No acceptable response format",
    "throttled": "Too many requests",
    "too_many_waits": "Too many long-polls and event streams open at once",
    "too_many_failed_logins": "Too many failed sign-in attempts",
    "unsupported_media_type_header": "Unsupported request content type",
    "parse_error": "Malformed request",
    "bad_request": "Bad request",
    "request_too_large": "The request is too large",
    "too_many_fields": "The request has too many fields",
    "too_many_files": "The request has too many files",
    "server_error": "Internal server error",
    "no_face_detected": "No face detected",
    "content_rejected": "Content rejected by moderation",
    "protected_identity": "This person cannot be swapped",
    "blocked_text": "The image contains blocked text",
    "invalid_image": "An image could not be used",
    "service_unavailable": "Temporarily unavailable",
    "consent_required": "Consent to use the uploaded faces is required",
    "share_links_disabled": "Share links are turned off",
    "job_not_shareable": "This job cannot be shared",
    "originals_deleted": "The original uploads were deleted",
    "payments_not_configured": "Card payments are not available",
    "payment_provider_error": "The payment provider failed",
    "upload_not_found": "No such upload",
    "upload_incomplete": "The upload is missing parts",
    "upload_not_ready": "The upload cannot be used yet",
    "checksum_mismatch": "The uploaded file is not the one declared",
    "access_token_expired": "The access token has expired",
    "invalid_refresh_token": "Unknown refresh token",
    "refresh_token_expired": "The refresh token has expired",
    "refresh_token_reused": "The refresh token was already used",
    "device_signed_out": "This device was signed out",
}
# Every `code` a problem can carry: the OpenAPI schema's closed enum (webapp.api.schema).
PROBLEM_CODES = tuple(sorted(TITLES))


def problem_type(request, code: str) -> str:
    path = f"/errors/{code.replace('_', '-')}"
    return request.build_absolute_uri(path) if request is not None else path


def problem_response(request, *, status_code: int, code: str, detail: str, errors: dict | None = None,
                     extra: dict | None = None, headers: dict | None = None) -> Response:
    body = {
        "type": problem_type(request, code),
        "title": TITLES.get(code, code.replace("_", " ").capitalize()),
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
            detail="A service this request needs is briefly unavailable; nothing was charged. Please retry shortly.",
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
    return render(request, "webapp/error_doc.html", {"code": key, "title": TITLES[key]})
