"""The site's live pages follow the user's job events from where the stream stood when the
page was rendered, so a change made between the render and the EventSource connecting is not lost."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.helpers.sse import job_events
from tests.webapp.conftest import api_client_for, post_job
from webapp.jobs.choices import JobState
from webapp.jobs.states import transition

pytestmark = pytest.mark.django_db(transaction=True)


def rendered(html: str, attribute: str) -> str:
    return re.search(rf'{attribute}="([^"]*)"', html).group(1)


@pytest.mark.parametrize("page", ["dashboard", "job"])
def test_live_pages_resume_their_event_stream_from_the_render(funded_user, astronaut_pair, settings, page):
    settings.EVENTS_STREAM_MAX_S = 20  # a safety net only
    source, target, _ = astronaut_pair
    job_id = post_job(api_client_for(funded_user), source, target).json()["id"]
    client = Client()
    client.force_login(funded_user)
    html = client.get("/" if page == "dashboard" else f"/jobs/{job_id}/").content.decode()
    assert rendered(html, "data-events-url") == "/api/v1/jobs/events"
    after = rendered(html, "data-events-after")
    assert after and after != "0"  # the job's creation was already published

    assert transition(job_id, from_states=[JobState.CREATED], to_state=JobState.SCREENING)  # before connecting
    stream = client.get(f"/api/v1/jobs/events?last_event_id={after}", headers={"Accept": "text/event-stream"})
    (event,) = job_events(stream, 1)
    stream.close()
    assert (event["data"]["id"], event["data"]["state"]) == (job_id, "screening")
