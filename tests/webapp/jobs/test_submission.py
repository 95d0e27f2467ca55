"""One submission path: the API's create, the site's upload page and "Run again" parse the
submitted fields with one parser (webapp.jobs.submission) and word a refusal with one mapping
(webapp.jobs.refusals), so a rule changed there holds on all three at once."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework import serializers

from tests.webapp.conftest import api_client_for, post_job
from webapp.jobs import refusals
from webapp.jobs.models import Job
from webapp.jobs.submission import SubmittedFields
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)

NOT_HERE = "This server does not offer 1080p."


@pytest.fixture
def site(funded_user) -> Client:
    client = Client()
    client.force_login(funded_user)
    return client


def said(response) -> str:
    return " ".join(str(m) for m in get_messages(response.wsgi_request))


def upload_form(source: bytes, target: bytes, **fields) -> dict:
    return {
        "source": SimpleUploadedFile("face.png", source),
        "target": SimpleUploadedFile("photo.jpg", target),
        "mode": "fast",
        "resolution": "720p",
        "faces": "one",
        "consent": "on",
        **fields,
    }


def test_a_rule_added_to_the_parser_holds_for_the_api_the_upload_page_and_run_again(
    monkeypatch, funded_user, site, astronaut_pair
):
    source, target, _ = astronaut_pair
    api = api_client_for(funded_user)
    first = post_job(api, source, target)  # still being screened: its originals can run again
    assert first.status_code == 201, first.content

    def refuse_1080p(self, value):
        if value == "1080p":
            raise serializers.ValidationError(NOT_HERE)
        return value

    monkeypatch.setattr(SubmittedFields, "validate_resolution", refuse_1080p, raising=False)

    response = post_job(api, source, target, resolution="1080p")
    assert response.status_code == 400 and response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"] == {"resolution": [NOT_HERE]}
    assert response.json()["detail"] == f"resolution: {NOT_HERE}"

    response = site.post("/jobs/new/", upload_form(source, target, resolution="1080p"))
    assert response.status_code == 400
    resolution_error = response.content.decode().split('id="resolution-error"', 1)[1].split("</div>", 1)[0]
    assert NOT_HERE in resolution_error

    job_id = first.json()["id"]
    again = {"mode": "fast", "resolution": "1080p", "faces": "one", "consent": "true"}
    response = site.post(f"/jobs/{job_id}/run-again", again)
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job_id}/"
    assert f"resolution: {NOT_HERE}" in said(response)

    assert Job.objects.count() == 1  # none of the three made a job
    # The rule refuses only what it names: 720p still passes everywhere.
    assert post_job(api, source, target, resolution="720p").status_code == 201
    assert site.post("/jobs/new/", upload_form(source, target)).status_code == 302
    assert site.post(f"/jobs/{job_id}/run-again", {**again, "resolution": "720p"}).status_code == 302
    assert Job.objects.count() == 4


def test_storage_down_is_said_the_same_on_the_upload_page_and_run_again(
    monkeypatch, funded_user, site, astronaut_pair
):
    source, target, _ = astronaut_pair
    first = post_job(api_client_for(funded_user), source, target)
    assert first.status_code == 201, first.content

    def unavailable(*args, **kwargs):
        raise storage.StorageError("S3 is down")

    monkeypatch.setattr(storage, "put_bytes", unavailable)
    response = site.post("/jobs/new/", upload_form(source, target))
    assert response.status_code == 400
    form_error = response.content.decode().split('id="form-error"', 1)[1].split("</div>", 1)[0]
    assert refusals.STORAGE_UNAVAILABLE in form_error

    again = {"mode": "fast", "resolution": "720p", "faces": "one", "consent": "true"}
    response = site.post(f"/jobs/{first.json()['id']}/run-again", again)
    assert said(response) == refusals.STORAGE_UNAVAILABLE
    assert Job.objects.count() == 1


def test_a_one_photo_submission_does_not_read_the_extra_photos_relation(api_a, astronaut_pair):
    """Setting an empty relation read it first: a query a submission for nothing. (The answer
    still reads it once, for its count of source photos.)"""
    source, target, _ = astronaut_pair
    with CaptureQueriesContext(connection) as queries:
        response = post_job(api_a, source, target)
    assert response.status_code == 201, response.content
    assert len([q for q in queries.captured_queries if "extra_sources" in q["sql"]]) == 1


def test_a_plan_moved_to_another_currency_during_a_submit_is_a_409_not_a_500(api_a, funded_user, astronaut_pair,
                                                                          monkeypatch):
    """An admin moves the account to a plan in another currency between the submit's quote and its
    hold: the quote means nothing in the new currency. A specific answer, nothing held."""
    from decimal import Decimal

    from billing import selectors, services
    from billing.models import PricePlan
    from webapp.jobs.services import intake

    eur = PricePlan.objects.create(
        name="EUR", unit_price=Decimal("0.10"), coefficient_720p=Decimal(1), coefficient_1080p=Decimal(2),
        weight_fast=Decimal(1), weight_standard=Decimal(1), weight_hq=Decimal(1), minimum_charge=Decimal("0.05"),
        currency="EUR", minor_unit_exponent=2,
    )
    real_quote = intake.job_quote

    def quote_then_the_admin_moves_the_plan(**kwargs):
        quote = real_quote(**kwargs)
        services.account_get_or_create(user=funded_user).__class__.objects.filter(user=funded_user).update(plan=eur)
        return quote

    monkeypatch.setattr(intake, "job_quote", quote_then_the_admin_moves_the_plan)
    source, target, _ = astronaut_pair
    response = post_job(api_a, source, target)
    assert response.status_code == 409, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "price_changed" and "submit it again" in response.json()["detail"]
    assert Job.objects.count() == 0 and selectors.account_balance(user=funded_user).held == 0
