"""The GPU worker takes jobs at once and measures its speed only while no job waits: a fresh
install's first job never waits for the measurement, and a job that arrives during it waits for
one step at most."""

from __future__ import annotations

import itertools
import socket

import django_rq
import pytest

from billing.models import GpuSample, ModeRun
from tests.webapp.conftest import ALL_QUEUES, post_job
from webapp.jobs.engine import get_pipeline
from webapp.jobs.models import Job
from webapp.jobs.steps import calibrate
from webapp.jobs.worker import VisageWorker

pytestmark = pytest.mark.django_db(transaction=True)


def work_with_idle_steps(steps) -> None:
    worker = VisageWorker(
        [django_rq.get_queue(n) for n in ALL_QUEUES],
        connection=django_rq.get_connection(ALL_QUEUES[0]),
        idle_steps=steps,
    )
    worker.work(burst=True)


def test_first_job_runs_before_the_speed_measurement(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    first = post_job(api_a, source, target).json()["id"]
    seen = []  # (the first job's state, jobs done) at every measurement step

    def recorded(steps):
        for index, _ in enumerate(steps):
            seen.append(Job.objects.get(id=first).state)
            if index == 0:  # a second job arrives while the measurement runs
                second.append(post_job(api_a, source, target).json()["id"])
            yield

    second: list[str] = []
    # The start of the real measurement (its first steps: hq's first swaps), not all of it.
    work_with_idle_steps(
        recorded(itertools.islice(calibrate.measurement_steps(get_pipeline(), videos=False), 4))
    )

    assert seen and seen[0] == "succeeded"  # the first job went before any measurement
    assert Job.objects.get(id=second[0]).state == "succeeded"
    assert ModeRun.objects.filter(requested="fast").exists()  # the measurement did run
    assert GpuSample.objects.filter(origin="warmup").count() == 0  # ... only its first steps
    assert GpuSample.objects.filter(origin="job").count() == 2  # each job measured alone, billed on it


def test_a_job_arriving_during_the_measurement_waits_one_step_at_most(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    states_after: list[str] = []
    arrived: list[str] = []

    def steps():
        arrived.append(post_job(api_a, source, target).json()["id"])
        yield  # step 1, during which the job arrived
        # Screening and the swap ran before this step: nothing else waited for the measurement.
        states_after.append(Job.objects.get(id=arrived[0]).state)
        yield

    work_with_idle_steps(steps())
    assert states_after == ["succeeded"]


def test_a_failing_step_leaves_the_worker_taking_jobs(api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    arrived: list[str] = []

    def failing():
        yield
        arrived.append(post_job(api_a, source, target).json()["id"])
        raise RuntimeError("the calibration face is missing")

    work_with_idle_steps(failing())
    assert Job.objects.get(id=arrived[0]).state == "succeeded"


def test_one_gpu_worker_of_a_machine_measures_its_speed_at_a_time():
    """`make run` starts two GPU workers where the engine runs on the CPU: both measuring would time
    each one's swaps beside the other's. The claim ends with the measurement (here: stopped after a
    step, as a worker's stop ends it), and a worker started later may measure again."""
    connection = django_rq.get_connection(ALL_QUEUES[0])
    pipeline = get_pipeline()
    first = calibrate.measurement_steps_for_machine(pipeline, connection, "worker-a")
    try:
        assert first is not None
        assert calibrate.measurement_steps_for_machine(pipeline, connection, "worker-b") is None
        next(first)  # its first step: fast mode's untimed first swap
    finally:
        if first is not None:
            first.close()
    later = calibrate.measurement_steps_for_machine(pipeline, connection, "worker-c")
    assert later is not None
    next(later)
    later.close()
    assert connection.get(calibrate.MEASURER_KEY.format(host=socket.gethostname())) is None
