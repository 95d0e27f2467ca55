"""GPU telemetry for GPU workers: utilisation and memory per device, sampled from NVML
(nvidia-ml-py) every few seconds into the multiprocess gauges. Where there is no NVML library or
no GPU, nothing is set, so the series are absent rather than a misleading 0."""

from __future__ import annotations

import logging
import threading

import pynvml  # nvidia-ml-py, a core dependency: importing needs no driver, nvmlInit() does

from webapp.telemetry import metrics

logger = logging.getLogger(__name__)


def _nvml():
    """The NVML binding (the library boundary tests replace), or None when it cannot start."""
    try:
        pynvml.nvmlInit()
        return pynvml
    except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound, driver errors
        logger.info("GPU telemetry off: %s", exc)
        return None


class GpuSampler:
    """Background thread: every `interval_s`, one reading per visible GPU."""

    def __init__(self, interval_s: float = 5.0, nvml=None):
        self.interval_s = interval_s
        self._nvml = nvml
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gpu-sampler", daemon=True)

    def start(self) -> GpuSampler | None:
        """Start sampling; None (and no thread) when there is no NVML or no GPU."""
        self._nvml = self._nvml or _nvml()
        if self._nvml is None or self._nvml.nvmlDeviceGetCount() == 0:
            return None
        self.sample()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def sample(self) -> int:
        """Read every GPU once; returns how many were read."""
        nvml = self._nvml
        count = nvml.nvmlDeviceGetCount()
        for index in range(count):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            rates = nvml.nvmlDeviceGetUtilizationRates(handle)
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
            gpu = str(index)
            metrics.GPU_UTILIZATION.labels(gpu=gpu).set(rates.gpu / 100.0)
            metrics.GPU_MEMORY_USED.labels(gpu=gpu).set(memory.used)
            metrics.GPU_MEMORY_TOTAL.labels(gpu=gpu).set(memory.total)
        return count

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.sample()
            except Exception:  # a driver hiccup must not kill the worker
                logger.warning("GPU sample failed", exc_info=True)
