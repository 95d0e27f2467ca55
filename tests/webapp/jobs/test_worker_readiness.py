"""While the workers are still loading their models (a fresh `make run`, a restart), the site and
the API say "the engine is starting up, ready in about N s"; a job sent meanwhile is kept and runs
once they take jobs."""

from __future__ import annotations

import time

import django_rq
import pytest

from tests.helpers.worker_process import start_worker
from tests.webapp.conftest import ALL_QUEUES, post_job
from webapp.jobs import readiness
from webapp.jobs.models import Job
from webapp.jobs.worker import VisageWorker

pytestmark = pytest.mark.django_db(transaction=True)

BOTH = [readiness.SCREENING, readiness.SWAP]


def work(*, warming: tuple[list[str], float] | None, idle_steps=None) -> None:
    """A real worker on every queue, in burst mode, in this process (as visage_worker makes it)."""
    worker = VisageWorker(
        [django_rq.get_queue(n) for n in ALL_QUEUES],
        connection=django_rq.get_connection(ALL_QUEUES[0]),
        name="worker-under-test",
        warming=warming,
        idle_steps=idle_steps,
    )
    worker.work(burst=True)


def test_nothing_is_said_when_no_worker_said_anything():
    assert readiness.role_state(readiness.SWAP) == readiness.RoleState(ready=False, warming=False, ready_in_s=None)
    assert readiness.warming_up(BOTH) is None


def test_a_warming_worker_gives_the_wait_it_expects():
    now = time.time()
    readiness.mark_warming(readiness.SCREENING, "m1", started_at=now - 3)
    state = readiness.role_state(readiness.SCREENING, now=now)
    expected = readiness.SHIPPED_WARMUP_S[readiness.SCREENING]  # a fresh install: the shipped estimate
    assert state.warming and not state.ready
    assert state.ready_in_s == round(expected - 3)
    # Overdue: it says "any moment now" rather than a wait that has passed.
    assert readiness.role_state(readiness.SCREENING, now=now + expected).ready_in_s is None
    # The swap role has no worker warming: the job's wait is the screening worker's.
    assert readiness.warming_up(BOTH).ready_in_s is not None
    assert readiness.warming_up([readiness.SWAP]) is None


def test_a_worker_that_died_while_loading_stops_counting():
    now = time.time()
    readiness.mark_warming(readiness.SWAP, "g1", started_at=now)
    ttl_s = readiness.WARMING_TTL_MIN_S
    assert readiness.role_state(readiness.SWAP, now=now + ttl_s - 1).warming
    assert not readiness.role_state(readiness.SWAP, now=now + ttl_s + 1).warming


def test_a_registered_worker_is_ready_and_its_warm_up_time_is_learned():
    since = time.time() - 7
    for role in BOTH:
        readiness.mark_warming(role, "worker-under-test", started_at=since)
    seen = []

    def look():
        seen.append({role: readiness.role_state(role) for role in BOTH})
        yield

    work(warming=(BOTH, since), idle_steps=look())
    assert seen == [{role: readiness.RoleState(ready=True, warming=False, ready_in_s=None) for role in BOTH}]
    # The next start expects as long as this one took (7 s and the little this test took).
    for role in BOTH:
        assert 7 <= readiness.expected_warmup_s(role) < 60
    # Gone with the worker: not ready, not warming.
    assert readiness.warming_up(BOTH) is None and not readiness.all_ready()


def test_a_job_sent_while_the_workers_warm_up_is_said_to_wait_and_then_runs(api_a, client, funded_user, astronaut_pair):
    since = time.time()
    for role in BOTH:
        readiness.mark_warming(role, "worker-under-test", started_at=since)
    source, target, _ = astronaut_pair
    response = post_job(api_a, source, target)
    assert response.status_code == 201, response.content
    job = response.json()
    assert job["warming_up"] is not None and job["warming_up"]["ready_in_seconds"] >= 1

    # The same on a second read (never a cached body), on the job's page and its live status.
    again = api_a.get(f"/api/v1/jobs/{job['id']}").json()
    assert again["warming_up"] is not None
    client.force_login(funded_user)
    status = client.get(f"/jobs/{job['id']}/status.json").json()
    assert status["status_text"].startswith("The swap engine is starting up · ready in about")
    assert "The swap engine is starting up" in client.get(f"/jobs/{job['id']}/").content.decode()

    work(warming=(BOTH, since))

    done = api_a.get(f"/api/v1/jobs/{job['id']}").json()
    assert done["state"] == "succeeded"
    assert done["warming_up"] is None
    assert Job.objects.get(id=job["id"]).result_key


def test_the_upload_page_says_the_engine_is_starting(client, funded_user):
    client.force_login(funded_user)
    assert 'id="engine-warming"' not in client.get("/jobs/new/").content.decode()
    readiness.mark_warming(readiness.SWAP, "g1", started_at=time.time())
    page = client.get("/jobs/new/").content.decode()
    assert 'id="engine-warming"' in page
    assert "The swap engine is starting up · ready in about" in page


def test_the_real_worker_says_it_is_warming_then_ready():
    """`manage.py visage_worker` in its own process: warming while it loads, ready once it takes jobs."""
    process = start_worker(queues=",".join(ALL_QUEUES))
    try:
        states = []
        deadline = time.monotonic() + 240  # a loaded 2-core machine; never a measure of speed
        while time.monotonic() < deadline and process.poll() is None:
            state = readiness.role_state(readiness.SWAP)
            if not states or states[-1] != (state.ready, state.warming):
                states.append((state.ready, state.warming))
            if state.ready:
                break
            time.sleep(0.05)
        assert process.poll() is None
        assert (False, True) in states and states[-1] == (True, False)
        assert readiness.all_ready()
    finally:
        process.terminate()
        process.wait(timeout=60)


def test_a_worker_that_fails_to_load_stops_saying_it_is_warming(monkeypatch):
    from django.core.management import call_command

    from moderation import services as moderation_services

    seen = []

    def failing_load():
        seen.append(readiness.role_state(readiness.SCREENING).warming)
        raise RuntimeError("the NSFW model file is damaged")

    monkeypatch.setattr(moderation_services, "warm_up", failing_load)
    with pytest.raises(RuntimeError, match="damaged"):
        call_command("visage_worker", "--queues", "moderation", "--metrics-port", "0")
    assert seen == [True]  # warming while it loaded
    assert not readiness.role_state(readiness.SCREENING).warming


def test_a_worker_that_died_without_unregistering_stops_counting_when_its_key_expires():
    """RQ's per-queue registry still lists a worker that was killed; its key (TTL-bound) is gone."""
    queue = django_rq.get_queue("moderation")
    worker = VisageWorker([queue], connection=queue.connection, name="killed-worker")
    worker.register_birth()
    assert readiness.role_state(readiness.SCREENING).ready
    assert not readiness.role_state(readiness.SWAP).ready  # it takes no GPU queue
    queue.connection.delete(worker.key)  # its TTL ran out: nobody heard from it
    assert readiness.role_state(readiness.SCREENING) == readiness.RoleState(ready=False, warming=False, ready_in_s=None)


def test_one_read_tells_each_role_apart():
    """role_states reads every role at once: a registered screening worker and a warming swap
    worker are each told as they are, and the job waits for the one still warming."""
    queue = django_rq.get_queue("moderation")
    VisageWorker([queue], connection=queue.connection, name="screening-worker").register_birth()
    now = time.time()
    readiness.mark_warming(readiness.SWAP, "g1", started_at=now - 2)
    states = readiness.role_states(BOTH, now=now)
    assert states[readiness.SCREENING] == readiness.RoleState(ready=True, warming=False, ready_in_s=None)
    expected = round(readiness.SHIPPED_WARMUP_S[readiness.SWAP] - 2)
    assert states[readiness.SWAP] == readiness.RoleState(ready=False, warming=True, ready_in_s=expected)
    assert not readiness.all_ready()
