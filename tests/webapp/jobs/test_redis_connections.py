"""The web process and the workers reuse their Redis connections: submitting a job (its enqueue,
the workers' readiness shown in its answer) and reading it open no new one once the process's
clients are warm. django_rq's get_connection made a new client with a pool of its own per call:
a TCP connection per enqueue and per readiness read, left for the garbage collector to close."""

from __future__ import annotations

import pytest
from redis.connection import AbstractConnection

from tests.webapp.conftest import api_client_for, post_job
from webapp.jobs import dispatch, readiness

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """The peer of each Redis connection opened from now on (any client, any pool)."""
    seen: list[str] = []
    real = AbstractConnection.connect

    def connect(self):
        if self._sock is None:
            seen.append(repr(self))
        return real(self)

    monkeypatch.setattr(AbstractConnection, "connect", connect)
    return seen


def test_submitting_and_reading_jobs_opens_no_new_redis_connection_once_warm(funded_user, astronaut_pair, opened):
    client = api_client_for(funded_user)
    source, target, _ = astronaut_pair
    warm = post_job(client, source, target)  # the process's clients and pools make their first connections
    assert warm.status_code == 201, warm.content
    assert client.get(f"/api/v1/jobs/{warm.json()['id']}").status_code == 200
    opened.clear()
    for _ in range(3):
        response = post_job(client, source, target)
        assert response.status_code == 201, response.content
        assert client.get(f"/api/v1/jobs/{response.json()['id']}").status_code == 200
        readiness.role_state(readiness.SWAP)
        assert dispatch.screening_pending(response.json()["id"])
    assert opened == []


def test_each_process_has_its_own_client(monkeypatch):
    """A forked child (the server's workers) must not share its parent's sockets."""
    here = dispatch.rq_connection("default")
    assert dispatch.rq_connection("default") is here
    monkeypatch.setattr(dispatch.os, "getpid", lambda: -1)
    assert dispatch.rq_connection("default") is not here
