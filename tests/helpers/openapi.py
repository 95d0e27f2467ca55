"""Checking real API responses against the OpenAPI document the server generates (jsonschema).

OpenAPI 3.0's `nullable` becomes JSON Schema's `null` type; `$ref`s resolve inside the document.
A response passes when its status is documented on the operation, it carries the headers documented
as required (Content-Language) with valid values, its Content-Type is one the operation documents for
that status, and its body is valid against that schema (formats checked).
"""

from __future__ import annotations

import json
import re
from functools import cache

import jsonschema
from rest_framework.test import APIClient


def generated_schema() -> dict:
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return json.loads(response.content)


def _json_schema(node):
    """OpenAPI 3.0 schema object → JSON Schema (nullable → a `null` alternative)."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {
        key: _json_schema(value) for key, value in node.items() if key not in ("nullable", "example")
    }
    if node.get("nullable"):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


@cache
def _document() -> str:
    return json.dumps(generated_schema())


def operation_for(path: str, method: str) -> tuple[str, dict]:
    """(path template, operation) that serves a concrete request path."""
    document = json.loads(_document())
    # Literal paths first: /jobs/events is not /jobs/{job_id}.
    for template, operations in sorted(document["paths"].items(), key=lambda item: item[0].count("{")):
        pattern = "\\A" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(template)) + "\\Z"
        if re.match(pattern, path) and method.lower() in operations:
            return template, operations[method.lower()]
    raise AssertionError(f"{method} {path} is not in the schema")


def assert_conforms(response, *, method: str, path: str | None = None, body=None) -> str:
    """The response is documented and valid; returns the operationId (for coverage checks).
    `body`: an already-parsed body (an SSE event's data), checked instead of the response's."""
    path = path or response.wsgi_request.path
    template, operation = operation_for(path, method)
    status = str(response.status_code)
    documented = operation["responses"].get(status)
    assert documented is not None, (
        f"{method} {template} answered {status}, undocumented: {response.content[:300]}"
    )
    document = json.loads(_document())
    for name, header in documented.get("headers", {}).items():
        header = _resolve(document, header)
        if header.get("required"):
            assert response.has_header(name), f"{method} {template} {status}: no {name} header"
            assert_valid(header["schema"], response[name], where=f"{method} {template} {status} {name}")
    content_type = response.get("Content-Type", "").split(";")[0].strip()
    content = documented.get("content")
    if not content:
        assert not getattr(response, "content", b""), f"{method} {template} {status} documents no body"
        return operation["operationId"]
    assert content_type in content, f"{method} {template} {status}: {content_type} not in {list(content)}"
    schema = content[content_type]["schema"]
    if content_type == "text/csv" or (body is None and getattr(response, "streaming", False)):
        return operation["operationId"]
    if body is None:
        body = json.loads(response.content)
    assert_valid(schema, body, where=f"{method} {template} {status}")
    return operation["operationId"]


def _resolve(document: dict, node: dict) -> dict:
    """A `$ref` ("#/components/…") to the object it names."""
    if "$ref" not in node:
        return node
    for part in node["$ref"].removeprefix("#/").split("/"):
        document = document[part]
    return document


def assert_valid(schema: dict, body, *, where: str) -> None:
    """`body` is valid against an OpenAPI schema object of the generated document."""
    document = json.loads(_document())
    root = {"components": _json_schema(document["components"]), **_json_schema(schema)}
    validator = jsonschema.Draft7Validator(root, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
    assert not errors, f"{where}: " + "; ".join(
        f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5]
    )
