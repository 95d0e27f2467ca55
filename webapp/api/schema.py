"""OpenAPI post-processing: the schema says what the API really answers (schemathesis).

Every operation under /api/v1/ documents the problem+json errors any request can meet: 429 (every
endpoint is throttled), 401 (a wrong token is refused even where none is needed), 503 (a dependency
is down), 400/413/415 where there is a body, 404 where there is a path id or a `page`. Error responses
declared without content get the Problem schema. Multipart fields that the views check themselves
(to answer a specific `missing_file`) are marked required, and face_sources is sent as a JSON part.
Every operation takes `Accept-Language` and every answer says its language in `Content-Language`.
"""

from __future__ import annotations

from django.conf import settings

from . import examples
from .problems import PROBLEM_CODES, problem_title
from .representations import OPEN_COMPONENTS

PROBLEM_SCHEMA = {
    "type": "object",
    "description": "RFC 9457 problem details, with a stable machine `code`.",
    "properties": {
        "type": {"type": "string", "description": "URI of the human page for `code`"},
        "title": {"type": "string"},
        "status": {"type": "integer", "minimum": 400, "maximum": 599},
        "detail": {"type": "string"},
        "code": {"type": "string", "enum": list(PROBLEM_CODES), "description": "stable machine code"},
        "instance": {"type": "string", "nullable": True, "description": "the request's path"},
        "request_id": {"type": "string", "nullable": True, "description": "quote it to support (X-Request-ID)"},
        "errors": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
            "description": "per-field messages",
        },
        # insufficient_credits only: what the job needs, what the caller has, where to buy more.
        "required": {"type": "string", "description": "insufficient_credits: the price (decimal string)"},
        "available": {"type": "string", "description": "insufficient_credits: the available credit"},
        "currency": {"type": "string"},
        "required_minor": {"type": "integer"},
        "links": {
            "type": "object",
            "properties": {"top_up": {"type": "string", "format": "uri"}},
            "required": ["top_up"],
            "additionalProperties": False,
        },
    },
    "required": ["type", "title", "status", "detail", "code", "instance", "request_id"],
    "additionalProperties": False,
}
PROBLEM_CONTENT = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
COMMON = {
    "401": "Not authenticated, or a wrong or revoked token (`not_authenticated`, `authentication_failed`).",
    "406": "The Accept header names no format this operation answers in (`not_acceptable`).",
    "429": "Too many requests (`throttled`): see Retry-After, RateLimit and RateLimit-Policy.",
    "503": "A service the API needs is down; try again after Retry-After.",
}
WITH_BODY = {
    "400": "The request is invalid (`validation_error` with per-field `errors`, `parse_error`, …).",
    "413": "The request body is too large (`request_too_large`).",
    "415": "Unsupported request Content-Type.",
}
NOT_FOUND = {"404": "No such resource, or a page past the last (`not_found`)."}
# Fields the views check themselves, so that a missing file is `missing_file` rather than a generic error.
REQUIRED_FIELDS = {"JobCreateRequest": ["source", "target"], "FaceDetectRequest": ["image"]}
# Operations that answer whatever the Accept header says (the event stream: EventSource's own).
ANSWERS_ANY_ACCEPT = {"jobs_events"}
JSON_PARTS = {"jobs_create": ["face_sources"]}


def close_objects(result, generator, request, public):
    """Response objects are closed (`additionalProperties: false`), but for OPEN_COMPONENTS: a client
    generator then types exactly the members the API sends."""
    for name, schema in result.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request") or schema.get("type") != "object" or "properties" not in schema:
            continue
        schema.setdefault("additionalProperties", name in OPEN_COMPONENTS)
    return result


def add_problem_responses(result, generator, request, public):
    result.setdefault("components", {}).setdefault("schemas", {})["Problem"] = PROBLEM_SCHEMA
    for component, fields in REQUIRED_FIELDS.items():
        schema = result["components"]["schemas"].get(component)
        if schema is not None:
            schema["required"] = sorted(set(schema.get("required", [])) | set(fields))
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/v1/"):
            continue
        for operation in operations.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            expected = dict(COMMON)
            if operation.get("operationId") in ANSWERS_ANY_ACCEPT:
                del expected["406"]
            parameters = operation.get("parameters", [])
            if "requestBody" in operation or any(p.get("in") == "query" for p in parameters):
                expected["400"] = WITH_BODY["400"]
            if "requestBody" in operation:
                expected.update(WITH_BODY)
            if any(p.get("in") == "path" or p.get("name") == "page" for p in parameters):
                expected.update(NOT_FOUND)
            responses = operation["responses"]
            for status, description in expected.items():
                responses.setdefault(status, {"description": description})
            for status, response in responses.items():
                if status[0] in "45" and not response.get("content"):
                    response["content"] = PROBLEM_CONTENT
            for name in JSON_PARTS.get(operation.get("operationId"), []):
                multipart = operation.get("requestBody", {}).get("content", {}).get("multipart/form-data")
                if multipart is not None:
                    multipart.setdefault("encoding", {})[name] = {"contentType": "application/json"}
    return result


def add_examples(result, generator, request, public):
    """One example per success response (webapp.api.examples.SUCCESS) and per error status."""
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/v1/"):
            continue
        for operation in operations.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for status, response in operation["responses"].items():
                for content in response.get("content", {}).values():
                    problem = examples.problem_for(operation["operationId"], status)
                    if status[0] in "45" and problem is not None:
                        code = problem[0]
                        value = examples.problem_example(status, problem_title(code), path, operation["operationId"])
                        content["examples"] = {code: {"value": value}}
                    elif status[0] == "2" and operation["operationId"] in examples.SUCCESS:
                        content["examples"] = {"ok": {"value": examples.SUCCESS[operation["operationId"]]}}
    return result


def add_language_headers(result, generator, request, public):
    """`Accept-Language` on every operation (one shared parameter) and `Content-Language` on every
    answer (one shared header): the language of `title`, `detail` and the other words meant for people
    (docs/concepts/languages.md). Machine fields (`code`, `type`, field names, states) never change."""
    languages = [code for code, _name in settings.LANGUAGES]
    components = result.setdefault("components", {})
    components.setdefault("parameters", {})["AcceptLanguage"] = {
        "name": "Accept-Language",
        "in": "header",
        "required": False,
        "description": (
            "The language of the human text in the answer: a problem's `title` and `detail`, per-field "
            f"`errors`, a job's messages. Speaks {', '.join(languages)} (`zh-Hans`, `zh-CN`, `zh-SG` and "
            "`zh` give Simplified Chinese); anything else, or no header, gives English. Machine fields "
            "(`code`, `type`, field names, states) are the same in every language."
        ),
        "schema": {"type": "string"},  # no limit: a header the site cannot read gives English, never a 400
        "example": "zh-Hans,zh;q=0.9,en;q=0.5",
    }
    components.setdefault("headers", {})["ContentLanguage"] = {
        "description": "The language the answer's human text is in (chosen from Accept-Language).",
        "required": True,
        "schema": {"type": "string", "enum": languages},
    }
    parameter = {"$ref": "#/components/parameters/AcceptLanguage"}
    header = {"$ref": "#/components/headers/ContentLanguage"}
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/v1/"):
            continue
        for operation in operations.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            operation.setdefault("parameters", []).append(parameter)
            for response in operation["responses"].values():
                response.setdefault("headers", {})["Content-Language"] = header
    return result
