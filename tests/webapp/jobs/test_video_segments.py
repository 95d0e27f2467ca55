"""Segmented video jobs under faults: a failed segment is retried alone, and the
stale-job sweeper leaves a job alone while its segments wait in the queue."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import django_rq
import pytest
from django.conf import settings as django_settings
from django.utils import timezone
from rq.job import JobStatus

from billing.models import LedgerEntry
from swap.video import io as video_io
from swap.video import synthetic
from tests.helpers.video_jobs import download_result, post_video_job
from tests.webapp.conftest import VIDEO_SPEC as SPEC
from tests.webapp.conftest import drain
from webapp.jobs import dispatch
from webapp.jobs.models import Job
from webapp.jobs.services import maintenance
from webapp.jobs.steps import segments
from webapp.jobs.worker import VisageWorker
from webapp.media import storage

pytestmark = pytest.mark.django_db(transaction=True)

SEGMENTS = 3  # 24 frames at 12 fps, 0.7 s segments → 3 segments of 8 frames


@pytest.fixture(autouse=True)
def segmented(settings):
    settings.VIDEO_ENABLED = True
    settings.VIDEO_SEGMENT_MAX_SECONDS = 0.7
    return settings


@pytest.fixture
def segment_runs(monkeypatch) -> Counter:
    """Counts runs per segment index (tasks.run_video_segment looks run_segment up at call time)."""
    runs: Counter = Counter()
    real = segments.run_segment

    def counting(job_id, attempt, index):
        runs[index] += 1
        return real(job_id, attempt, index)

    monkeypatch.setattr(segments, "run_segment", counting)
    return runs


def _gpu_queue(job_id):
    return django_rq.get_queue(Job.objects.get(id=job_id).queue)


def _start_parent(job_id) -> None:
    """Screening, then ONLY the parent's GPU run: it plans the segments and enqueues them."""
    drain([django_settings.MODERATION_QUEUE])
    queue = _gpu_queue(job_id)
    VisageWorker([queue], connection=queue.connection).work(burst=True, max_jobs=1)
    job = Job.objects.get(id=job_id)
    assert job.state == "running" and job.attempts == 1
    assert queue.count == SEGMENTS  # the segments wait; the join is deferred behind them


def _make_heartbeat_stale(job_id) -> None:
    stale = timezone.now() - timedelta(seconds=django_settings.JOB_HEARTBEAT_TIMEOUT_S + 60)
    Job.objects.filter(id=job_id).update(heartbeat_at=stale)


def _assert_result(api, job_id, tmp_path) -> Job:
    body = api.get(f"/api/v1/jobs/{job_id}").json()
    assert body["state"] == "succeeded", body["error"]
    counters = [synthetic.read_counter(frame) for frame in video_io.read_frames(download_result(body, tmp_path))]
    assert counters == list(range(SPEC.frames))  # nothing repeated, nothing dropped
    job = Job.objects.get(id=job_id)
    assert job.frames_processed == SPEC.frames
    assert job.engine_notes["segments"] == SEGMENTS
    assert LedgerEntry.objects.filter(job_id=job_id, kind="capture").count() == 1
    return job


def test_a_failed_segment_is_retried_alone(api_a, source_png, clip, segment_runs, monkeypatch, tmp_path):
    flaky_index = 1
    run_segment = segments.run_segment  # the counting wrapper

    def broken_get(bucket, key):
        raise storage.StorageError("S3 is briefly unavailable")

    def flaky_once(job_id, attempt, index):
        if index == flaky_index and segment_runs[index] == 0:
            with monkeypatch.context() as patch:
                patch.setattr(storage, "get_bytes", broken_get)
                return run_segment(job_id, attempt, index)
        return run_segment(job_id, attempt, index)

    monkeypatch.setattr(segments, "run_segment", flaky_once)
    job_id = post_video_job(api_a, source_png, clip).json()["id"]

    drain()

    assert segment_runs == {0: 1, 1: 1, 2: 1}
    job = Job.objects.get(id=job_id)
    assert job.state == "running" and job.attempts == 1  # waiting for the segment's retry
    queue = _gpu_queue(job_id)
    scheduled = queue.scheduled_job_registry.get_job_ids()
    assert scheduled == [dispatch.video_task_id(job.id, 1, f"segment-{flaky_index}")]
    # While the retry waits out its backoff the sweeper must not start a new attempt either.
    _make_heartbeat_stale(job_id)
    assert maintenance.jobs_sweep_stale()["requeued"] == 0
    queue.enqueue_job(queue.fetch_job(scheduled[0]))  # don't wait for the backoff
    queue.scheduled_job_registry.remove(scheduled[0])

    drain()

    assert segment_runs == {0: 1, 1: 2, 2: 1}  # only the failed segment ran again
    job = _assert_result(api_a, job_id, tmp_path)
    assert job.attempts == 1
    assert not [k for k in storage.list_keys(django_settings.S3_UPLOADS_BUCKET) if "/parts/" in k]


def test_sweeper_leaves_a_job_whose_segments_wait_in_the_queue(
    api_a, source_png, clip, segment_runs, tmp_path
):
    job_id = post_video_job(api_a, source_png, clip).json()["id"]
    _start_parent(job_id)
    job = Job.objects.get(id=job_id)
    assert dispatch.children_pending(job.id, job.attempts, job.queue)

    _make_heartbeat_stale(job_id)  # no segment has run for longer than the heartbeat timeout
    assert maintenance.jobs_sweep_stale() == {"requeued": 0, "failed": 0, "rescreened": 0, "reenqueued": 0}
    job = Job.objects.get(id=job_id)
    assert (job.state, job.attempts) == ("running", 1)

    drain()

    assert segment_runs == {0: 1, 1: 1, 2: 1}
    assert _assert_result(api_a, job_id, tmp_path).attempts == 1


def test_sweeper_requeues_a_job_whose_segment_worker_died(api_a, source_png, clip, tmp_path):
    job_id = post_video_job(api_a, source_png, clip).json()["id"]
    _start_parent(job_id)
    queue = _gpu_queue(job_id)
    VisageWorker([queue], connection=queue.connection).work(burst=True, max_jobs=SEGMENTS - 1)
    # The last segment's worker took it and was SIGKILLed long ago: RQ still says `started`.
    last = queue.fetch_job(dispatch.video_task_id(Job.objects.get(id=job_id).id, 1, f"segment-{SEGMENTS - 1}"))
    queue.remove(last.id)
    last.started_at = timezone.now() - timedelta(seconds=django_settings.JOB_HEARTBEAT_TIMEOUT_S + 60)
    last.set_status(JobStatus.STARTED)
    last.save()
    assert queue.count == 0
    _make_heartbeat_stale(job_id)
    assert not dispatch.children_pending(job_id, 1, Job.objects.get(id=job_id).queue)

    assert maintenance.jobs_sweep_stale() == {"requeued": 1, "failed": 0, "rescreened": 0, "reenqueued": 0}
    assert Job.objects.get(id=job_id).state == "queued"

    drain()

    assert _assert_result(api_a, job_id, tmp_path).attempts == 2


def test_segments_swap_the_cuts_stored_in_the_plan(api_a, source_png, clip, monkeypatch, tmp_path):
    """A segment task swaps the frames the job's run planned, read from the plan, not re-derived
    by its own code (which, during a rolling deploy, may cut a clip differently)."""
    bounds = {}
    real = segments.swap_clip

    def recording(job, source, target, part, info, *, on_progress, start, stop):
        bounds[start] = stop
        return real(job, source, target, part, info, on_progress=on_progress, start=start, stop=stop)

    monkeypatch.setattr(segments, "swap_clip", recording)
    job_id = post_video_job(api_a, source_png, clip).json()["id"]
    _start_parent(job_id)
    job = Job.objects.get(id=job_id)
    plan = segments.plan_key(job, job.attempts, "plan")
    redis = segments.redis_for(job)
    assert redis.hget(plan, "starts") == b"0,8,16"  # equal cuts
    redis.hset(plan, "starts", "0,5,16")  # as a planner cutting differently would have

    drain()

    assert bounds == {0: 5, 5: 16, 16: None}
    _assert_result(api_a, job_id, tmp_path)
