"""SIGTERM to a real worker mid-job (a Kubernetes scale-down or rollout): the job finishes, or is
requeued when it outlasts the drain timeout, and is charged exactly once either way."""

from __future__ import annotations

import os
import signal
import time
from decimal import Decimal

import django_rq
import pytest

from billing.models import LedgerEntry
from tests.helpers.waiting import wait_for_state, wait_until
from tests.helpers.worker_process import start_worker
from tests.webapp.conftest import drain, post_job
from webapp.jobs import dispatch
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)

WORKER_EXIT_TIMEOUT_S = 180  # bounds a hung worker; not a speed expectation


def captures(job_id) -> int:
    return LedgerEntry.objects.filter(job_id=job_id, kind="capture").count()


def test_sigterm_lets_the_running_job_finish_and_takes_no_new_one(api_a, astronaut_pair, settings):
    source, target, _ = astronaut_pair
    ids = [post_job(api_a, source, target).json()["id"] for _ in range(2)]
    drain([settings.MODERATION_QUEUE])
    assert set(Job.objects.filter(id__in=ids).values_list("state", flat=True)) == {"queued"}

    # The pause keeps the job running well past the signal; the drain timeout is far longer.
    worker = start_worker(VISAGE_FAULT_PAUSE_S="8", VISAGE_WORKER_DRAIN_TIMEOUT_S="600")
    try:
        running = wait_until(lambda: Job.objects.filter(id__in=ids, state="running").first(),
                             timeout_s=WORKER_EXIT_TIMEOUT_S, what="a job running")
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=WORKER_EXIT_TIMEOUT_S) == 0
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()

    finished = Job.objects.get(id=running.id)
    assert finished.state == "succeeded", finished.error_message
    assert finished.attempts == 1
    assert captures(finished.id) == 1
    other = Job.objects.get(id=next(i for i in ids if i != str(running.id)))
    assert other.state == "queued" and other.attempts == 0  # stopping: no new job was taken
    assert captures(other.id) == 0


def test_a_job_outlasting_the_drain_timeout_is_requeued_and_charged_once(api_a, astronaut_pair, settings):
    source, target, _ = astronaut_pair
    job_id = post_job(api_a, source, target).json()["id"]
    drain([settings.MODERATION_QUEUE])
    balance_before = Decimal(api_a.get("/api/v1/me").json()["balance"])

    # The job would sleep for 10 minutes; the worker may drain for 1 s only.
    worker = start_worker(VISAGE_FAULT_PAUSE_S="600", VISAGE_WORKER_DRAIN_TIMEOUT_S="1")
    try:
        wait_for_state(job_id, "running", timeout_s=WORKER_EXIT_TIMEOUT_S)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=WORKER_EXIT_TIMEOUT_S) == 0
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()

    requeued = Job.objects.get(id=job_id)
    assert requeued.state == "queued" and requeued.attempts == 1  # not left `running` for the sweeper
    queue = django_rq.get_queue(dispatch.gpu_queue(requeued.queue))
    assert dispatch.run_task_id(requeued.id, 2) in queue.job_ids  # the next attempt waits on its queue
    assert captures(job_id) == 0

    drain()  # another (healthy) worker takes it
    job = Job.objects.get(id=job_id)
    assert job.state == "succeeded", job.error_message
    assert job.attempts == 2
    assert captures(job_id) == 1
    me = api_a.get("/api/v1/me").json()
    assert Decimal(me["held"]) == 0
    assert Decimal(me["balance"]) == balance_before - Decimal(api_a.get(f"/api/v1/jobs/{job_id}").json()["cost"]["charge"])


def test_a_worker_ends_without_waiting_a_minute_for_its_command_listener(settings):
    """The end of a worker (SIGTERM, a burst drained) stops RQ's command listener. One that has
    already seen its subscription end sleeps up to 60 s for a new one, and stopping it waited for
    that: a worker's end hung a minute now and then (a test in every full run took 60 s more).
    Here the listener is put in that state on purpose before the worker ends."""
    from webapp.jobs.worker import VisageWorker

    connection = django_rq.get_connection(settings.MODERATION_QUEUE)
    worker = VisageWorker([django_rq.get_queue(settings.MODERATION_QUEUE)], connection=connection)
    worker.subscribe()
    wait_until(lambda: worker.pubsub.subscribed, timeout_s=30, what="the listener subscribed")
    worker.pubsub.unsubscribe()
    wait_until(lambda: not worker.pubsub.subscribed, timeout_s=30, what="the listener saw its channel end")
    started = time.monotonic()
    worker.unsubscribe()
    # Bounds a hang of 60 s (RQ's sleep_time); not a speed expectation.
    assert time.monotonic() - started < 20
