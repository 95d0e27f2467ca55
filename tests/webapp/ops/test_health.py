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


def test_healthz_on_a_web_image_without_the_detectors(monkeypatch):
    """The web image has no nudenet (deploy/Containerfile): /healthz stays healthy and says so."""
    from django.test import Client

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

    from django.test import Client

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
