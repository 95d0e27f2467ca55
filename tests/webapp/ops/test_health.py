"""/healthz against the real stack (database, Redis, S3, a real worker); /metrics is in test_metrics.py."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.webapp.conftest import drain, post_job

pytestmark = pytest.mark.django_db(transaction=True)


def test_healthz_reports_the_real_stack(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    post_job(api_a, source, target)
    drain()
    health = Client().get("/healthz").json()
    assert health["status"] == "ok"
    assert health["checks"]["database"] == health["checks"]["redis"] == health["checks"]["s3"] == "ok"


def test_healthz_on_a_web_image_without_the_detectors(monkeypatch):
    """The web image has no nudenet (deploy/Containerfile): /healthz stays healthy and says so."""
    from moderation import selectors

    def without_nudenet():
        raise ModuleNotFoundError("No module named 'nudenet'", name="nudenet")

    monkeypatch.setattr(selectors, "readiness_report", without_nudenet)
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json()["checks"]["moderation"] == "not installed in this process (nudenet)"


def test_healthz_says_what_is_down_but_not_how(settings, caplog):
    """The public probe names the dependency; the address and the client's error text go to the log."""
    import socket

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
    with caplog.at_level("WARNING", logger="webapp.ops.health"):
        response = Client().get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["redis"] == "error: unavailable"
    assert str(port) not in response.content.decode() and "Error" not in response.content.decode()
    assert str(port) in caplog.text  # operators still see how it failed


def test_healthz_keeps_the_moderation_set_up_for_operators(settings, admin_client, django_user_model):
    """Anyone may probe readiness; only an operator (the metrics key, or staff) learns which checks
    are off and how many blocked terms and protected people there are: what to get past."""
    settings.METRICS_KEY = "operators-metrics-key"
    anonymous = Client().get("/healthz")
    assert anonymous.status_code == 200
    assert set(anonymous.json()["checks"]) == {"database", "redis", "s3"}
    user = django_user_model.objects.create_user("not-staff", password="pw-not-staff-123")
    signed_in = Client()
    signed_in.force_login(user)
    assert set(signed_in.get("/healthz").json()["checks"]) == {"database", "redis", "s3"}
    wrong_key = Client().get("/healthz", headers={"Authorization": "Bearer someone-elses-key"})
    assert "moderation" not in wrong_key.json()["checks"]

    operator = Client().get("/healthz", headers={"Authorization": "Bearer operators-metrics-key"}).json()
    staff = admin_client.get("/healthz").json()
    for checks in (operator["checks"], staff["checks"]):
        assert {"nsfw", "ocr", "blocked_terms", "protected_identities"} <= set(checks["moderation"])
        assert checks["inference"] == {"backend": "local"}
