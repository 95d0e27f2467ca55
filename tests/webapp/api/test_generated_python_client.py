"""The generated Python client (clients/python) against the live server: submit the astronaut,
long-poll until the job is final, download the result."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.webapp.conftest import drain

CLIENT = Path(__file__).resolve().parents[3] / "clients" / "python"
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def visage_api_client(monkeypatch):
    monkeypatch.syspath_prepend(str(CLIENT))
    import visage_api_client

    yield visage_api_client
    for name in [n for n in sys.modules if n.startswith("visage_api_client")]:
        del sys.modules[name]


def test_submit_long_poll_and_download_with_the_generated_client(
    visage_api_client, live_server, funded_user, astronaut_pair
):
    import httpx
    from visage_api_client import AuthenticatedClient, Client
    from visage_api_client.api.auth import auth_token_create
    from visage_api_client.api.jobs import jobs_create, jobs_retrieve
    from visage_api_client.models import (
        Job,
        JobCreateRequest,
        JobsRetrieveUntil,
        JobStateEnum,
        Problem,
        TokenCreateRequest,
    )
    from visage_api_client.types import File

    source, target, (width, height) = astronaut_pair
    anonymous = Client(base_url=live_server.url)
    token = auth_token_create.sync(
        client=anonymous, body=TokenCreateRequest(username="alice", password="alice-pass-123")
    )
    client = AuthenticatedClient(base_url=live_server.url, token=token.token, timeout=httpx.Timeout(60.0))

    refused = jobs_create.sync(
        client=client,
        body=JobCreateRequest(
            source=File(payload=source, file_name="me.png"), target=File(payload=target, file_name="t.jpg")
        ),
    )
    assert isinstance(refused, Problem) and refused.code.value == "consent_required"
    chinese = jobs_create.sync_detailed(
        client=client,
        body=JobCreateRequest(
            source=File(payload=source, file_name="me.png"), target=File(payload=target, file_name="t.jpg")
        ),
        accept_language="zh-Hans",
    )
    assert chinese.headers["Content-Language"] == "zh-hans"
    assert chinese.parsed.code.value == "consent_required" and chinese.parsed.title == "需要确认你有权使用上传的人脸"

    job = jobs_create.sync(
        client=client,
        body=JobCreateRequest(
            source=File(payload=source, file_name="me.png"),
            target=File(payload=target, file_name="beach.jpg"),
            consent=True,
        ),
    )
    assert isinstance(job, Job), job
    assert job.target.name == "beach.jpg" and job.terminal is False

    answers: list = []

    def long_poll():  # as an app does: ask again until the job is final (30 s per request)
        for _ in range(20):
            answers.append(jobs_retrieve.sync(job.id, client=client, wait=30, until=JobsRetrieveUntil.FINAL))
            if not isinstance(answers[-1], Job) or answers[-1].terminal:
                return

    poll = threading.Thread(target=long_poll)
    poll.start()  # waits on the server while a real worker runs the job here
    drain()
    poll.join()
    final = answers[-1]
    assert isinstance(final, Job), final
    assert final.state == JobStateEnum.SUCCEEDED, final.error
    assert final.cost.state.value == "paid" and final.result.ai_generated is True

    download = httpx.get(final.result.url)
    assert download.status_code == 200
    image = cv2.imdecode(np.frombuffer(download.content, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape[:2] == (final.result.height, final.result.width) == (height, width)
