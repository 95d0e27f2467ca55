"""A worker process runs OpenCV's calls on the calling thread: its own threads (one job at a time,
a clip's frames on their decode / track / swap / encode threads) are its parallelism."""

from __future__ import annotations

import cv2
import pytest
from django.core.management import call_command

from moderation import services as moderation_services

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def opencv_threads():
    before = cv2.getNumThreads()
    cv2.setNumThreads(4)  # a pool of several threads, whatever this machine's core count
    yield
    cv2.setNumThreads(before)


def _start_a_worker_that_stops_while_loading(monkeypatch) -> None:
    """`manage.py visage_worker` in this process, up to where it loads its models (the process-wide
    settings are made before that); the load fails, so no worker loop runs."""

    def failing_load():
        raise RuntimeError("stop here")

    monkeypatch.setattr(moderation_services, "warm_up", failing_load)
    with pytest.raises(RuntimeError, match="stop here"):
        call_command("visage_worker", "--queues", "moderation", "--metrics-port", "0")


def test_a_worker_runs_opencv_on_the_calling_thread(monkeypatch, opencv_threads):
    monkeypatch.delenv("OPENCV_FOR_THREADS_NUM", raising=False)
    _start_a_worker_that_stops_while_loading(monkeypatch)
    assert cv2.getNumThreads() == 1


def test_opencvs_own_variable_still_decides_where_an_operator_sets_it(monkeypatch, opencv_threads):
    monkeypatch.setenv("OPENCV_FOR_THREADS_NUM", "4")
    _start_a_worker_that_stops_while_loading(monkeypatch)
    assert cv2.getNumThreads() == 4
