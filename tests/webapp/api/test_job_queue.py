"""A queued job's place in line in the job object (`queue`), as the site's job page says it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from tests.webapp.conftest import post_job
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_queued_job_says_its_place_in_line_and_others_say_null(api_a, funded_user, astronaut_pair):
    source, target, _ = astronaut_pair
    created = [post_job(api_a, source, target).json() for _ in range(3)]
    assert all(body["queue"] is None for body in created)  # not queued yet: being screened
    first, second, screening = (body["id"] for body in created)
    now = timezone.now()
    for offset, job_id in enumerate((first, second)):
        Job.objects.filter(id=job_id).update(
            state="queued", queue="default", queued_at=now + timedelta(seconds=offset)
        )

    ahead, behind = (api_a.get(f"/api/v1/jobs/{job_id}").json()["queue"] for job_id in (first, second))
    assert (ahead["position"], behind["position"]) == (1, 2)
    # Nothing running and no worker counted: the first starts now, the second when the first is done.
    assert ahead["start_seconds"] == 0 and ahead["eta_seconds"] >= 1
    assert behind["start_seconds"] == ahead["eta_seconds"] < behind["eta_seconds"]
    assert api_a.get(f"/api/v1/jobs/{screening}").json()["queue"] is None

    listed = {body["id"]: body["queue"] for body in api_a.get("/api/v1/jobs").json()["results"]}
    assert listed == {first: ahead, second: behind, screening: None}

    # The job page's live JSON says the same place in line.
    site = Client()
    site.force_login(funded_user)
    status = site.get(f"/jobs/{second}/status.json").json()
    assert (status["queue_position"], status["eta_seconds"]) == (behind["position"], behind["eta_seconds"])


def test_the_place_in_line_moves_without_a_stale_cached_body(api_a, astronaut_pair):
    """Another job leaving the queue moves this one up, though its own ETag stays."""
    source, target, _ = astronaut_pair
    first, second = (post_job(api_a, source, target).json()["id"] for _ in range(2))
    now = timezone.now()
    for offset, job_id in enumerate((first, second)):
        Job.objects.filter(id=job_id).update(
            state="queued", queue="default", queued_at=now + timedelta(seconds=offset)
        )
    assert api_a.get(f"/api/v1/jobs/{second}").json()["queue"]["position"] == 2
    Job.objects.filter(id=first).update(state="running", started_at=now)
    assert api_a.get(f"/api/v1/jobs/{second}").json()["queue"]["position"] == 1
