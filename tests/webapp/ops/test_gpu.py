"""GPU telemetry from NVML: a fake `pynvml` module stands in at the library boundary only; the
sampler, the multiprocess gauges and the scrape are real."""

from __future__ import annotations

import types
from dataclasses import dataclass

import pytest
from django.test import Client

from tests.webapp.ops.metrics_helpers import samples, value
from webapp.ops import gpu

pytestmark = pytest.mark.django_db


@dataclass
class Rates:
    gpu: int
    memory: int


@dataclass
class Memory:
    total: int
    used: int
    free: int


class NVMLError(Exception):
    pass


def fake_pynvml(devices: list[tuple[int, int, int]] | None, *, init_error: bool = False) -> types.ModuleType:
    """A stand-in for nvidia-ml-py's `pynvml`: (utilisation %, used bytes, total bytes) per GPU."""
    module = types.ModuleType("pynvml")
    module.NVMLError = NVMLError

    def init():
        if init_error:
            raise NVMLError("NVML Shared Library Not Found")

    module.nvmlInit = init
    module.nvmlDeviceGetCount = lambda: len(devices or [])
    module.nvmlDeviceGetHandleByIndex = lambda index: index
    module.nvmlDeviceGetUtilizationRates = lambda handle: Rates(gpu=devices[handle][0], memory=0)
    module.nvmlDeviceGetMemoryInfo = lambda handle: Memory(
        total=devices[handle][2], used=devices[handle][1], free=devices[handle][2] - devices[handle][1]
    )
    return module


def test_a_gpu_worker_reports_utilisation_and_memory_per_gpu(monkeypatch):
    devices = [(37, 3 * 2**30, 80 * 2**30), (91, 70 * 2**30, 80 * 2**30)]
    monkeypatch.setattr(gpu, "pynvml", fake_pynvml(devices))
    sampler = gpu.GpuSampler(interval_s=3600).start()
    try:
        assert sampler is not None
        scrape = samples(Client().get("/metrics").content.decode())
    finally:
        sampler.stop()
    assert value(scrape, "visage_gpu_utilization_ratio", gpu="0") == pytest.approx(0.37)
    assert value(scrape, "visage_gpu_utilization_ratio", gpu="1") == pytest.approx(0.91)
    assert value(scrape, "visage_gpu_memory_used_bytes", gpu="1") == 70 * 2**30
    assert value(scrape, "visage_gpu_memory_total_bytes", gpu="0") == 80 * 2**30

    devices[0] = (5, 4 * 2**30, 80 * 2**30)  # the next sample replaces the reading
    sampler.sample()
    scrape = samples(Client().get("/metrics").content.decode())
    assert value(scrape, "visage_gpu_utilization_ratio", gpu="0") == pytest.approx(0.05)


@pytest.mark.parametrize(
    "pynvml",
    [
        pytest.param(fake_pynvml(None, init_error=True), id="no driver library"),
        pytest.param(fake_pynvml([]), id="no GPU"),
    ],
)
def test_without_a_gpu_there_is_no_sampler(monkeypatch, pynvml):
    monkeypatch.setattr(gpu, "pynvml", pynvml)
    assert gpu.GpuSampler(interval_s=3600).start() is None
