"""/healthz against the real stack (database, Redis, S3, a real worker); /metrics is in test_metrics.py."""

from __future__ import annotations

import pytest

from tests.webapp.conftest import drain, post_job

pytestmark = pytest.mark.django_db(transaction=True)


def test_healthz_reports_the_real_stack(api_a, astronaut_pair):
    from django.test import Client

    source, target, _ = astronaut_pair
    post_job(api_a, source, target)
    drain()
    health = Client().get("/healthz").json()
    assert health["status"] == "ok"
    assert health["checks"]["database"] == health["checks"]["redis"] == health["checks"]["s3"] == "ok"
