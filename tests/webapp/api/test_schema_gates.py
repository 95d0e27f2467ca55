"""Quality gates on the OpenAPI document that mobile and web clients are generated from."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from django.core.management import call_command

from tests.helpers.openapi import assert_valid, generated_schema

COMMITTED = Path(__file__).resolve().parents[3] / "docs" / "openapi.yaml"
REGENERATE = "python manage.py spectacular --validate --fail-on-warn --file docs/openapi.yaml"


def api_operations():
    for path, operations in generated_schema()["paths"].items():
        if path.startswith("/api/v1/"):
            for method, operation in operations.items():
                if isinstance(operation, dict) and "responses" in operation:
                    yield path, method, operation


def test_the_schema_builds_valid_and_without_warnings(tmp_path):
    # --fail-on-warn: any drf-spectacular warning or error (an untyped field, a view it cannot
    # read, an enum name collision) fails; --validate: the document is valid OpenAPI 3.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "openapi.yaml"))


def test_every_operation_has_an_id_summary_tags_and_examples():
    operations = list(api_operations())
    assert len(operations) == 28
    ids = [operation.get("operationId") for _, _, operation in operations]
    assert all(ids) and len(set(ids)) == len(ids), ids
    for path, method, operation in operations:
        where = f"{method.upper()} {path}"
        assert operation.get("summary"), where
        assert operation.get("tags") and "v1" not in operation["tags"], where
        for status, response in operation["responses"].items():
            for media_type, content in response.get("content", {}).items():
                assert content.get("examples"), (where, status, media_type)
        success = [s for s in operation["responses"] if s.startswith("2")]
        assert success, where


def test_every_example_is_valid_against_its_schema():
    checked = 0
    for path, method, operation in api_operations():
        for status, response in operation["responses"].items():
            for media_type, content in response.get("content", {}).items():
                if media_type == "text/csv":
                    continue
                for name, example in content.get("examples", {}).items():
                    assert_valid(
                        content["schema"], example["value"], where=f"{method} {path} {status} {name}"
                    )
                    checked += 1
    assert checked > 100


def test_every_operation_documents_the_errors_any_client_can_get():
    for path, method, operation in api_operations():
        statuses = set(operation["responses"])
        assert {"401", "429", "503"} <= statuses, (method, path)
        if operation["operationId"] != "jobs_events":  # the stream answers any Accept
            assert "406" in statuses, (method, path)
        if "{job_id}" in path:
            assert "404" in statuses, (method, path)
        if "requestBody" in operation:
            assert {"400", "413", "415"} <= statuses, (method, path)


def test_every_operation_takes_accept_language_and_every_answer_names_its_language():
    """A client generated from the schema can ask for Chinese problem text and knows the answer says
    which language it is in (the contract tests check the header on real answers)."""
    components = generated_schema()["components"]
    assert components["parameters"]["AcceptLanguage"]["in"] == "header"
    assert components["headers"]["ContentLanguage"]["schema"]["enum"] == ["en", "zh-hans"]
    for path, method, operation in api_operations():
        assert {"$ref": "#/components/parameters/AcceptLanguage"} in operation["parameters"], (method, path)
        for status, response in operation["responses"].items():
            assert response["headers"]["Content-Language"] == {"$ref": "#/components/headers/ContentLanguage"}, (
                method, path, status,
            )


def test_problem_codes_are_a_closed_enum_of_every_code_the_api_sends():
    from rest_framework import exceptions

    from billing import errors as billing_errors
    from billing import stripe_gateway
    from webapp.accounts import devices
    from webapp.api import authentication, middleware
    from webapp.jobs import errors as job_errors
    from webapp.media import validation

    codes = set(generated_schema()["components"]["schemas"]["Problem"]["properties"]["code"]["enum"])

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    sent = {cls.code for cls in subclasses(job_errors.JobError)}
    sent |= {
        "insufficient_credits",
        stripe_gateway.PaymentsNotConfigured.default_code,
        stripe_gateway.PaymentProviderError.default_code,
    }
    sent |= {
        cls.default_code
        for cls in subclasses(exceptions.APIException)
        if cls.__module__ == "rest_framework.exceptions"
    }
    sent -= {"invalid", "unsupported_media_type"}  # sent as validation_error, unsupported_media_type_header
    sent |= {"unsupported_media_type_header"} | {code for code, _ in middleware.STATUS_CODES.values()}
    sent |= set(re.findall(r'UploadRejected\(\s*"([a-z_]+)"', Path(validation.__file__).read_text()))
    sent |= set(re.findall(r'RefreshRefused\(\s*"([a-z_]+)"', Path(devices.__file__).read_text()))
    sent |= {authentication.AccessTokenExpired.default_code}
    assert billing_errors.InsufficientCredit.default_code in codes
    assert sent <= codes, sorted(sent - codes)


def test_the_committed_schema_is_the_generated_one(tmp_path):
    generated = tmp_path / "openapi.yaml"
    call_command("spectacular", "--file", str(generated))
    assert COMMITTED.exists(), f"docs/openapi.yaml is missing: run `{REGENERATE}`"
    assert yaml.safe_load(generated.read_text()) == yaml.safe_load(COMMITTED.read_text()), (
        f"The API changed but docs/openapi.yaml did not: run `{REGENERATE}`, review the diff (clients are "
        "generated from it: clients/README.md) and commit it."
    )
