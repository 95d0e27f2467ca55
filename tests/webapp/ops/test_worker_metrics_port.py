"""A worker's own metrics port: what the worker process recorded, behind the same bearer key."""

from __future__ import annotations

import pytest
import requests

from tests.webapp.ops.metrics_helpers import samples, value
from webapp.ops.embedded import free_port
from webapp.ops.metrics_server import serve_worker_metrics
from webapp.telemetry import metrics


def test_the_worker_port_serves_recorded_metrics_behind_the_key():
    port = free_port()
    server = serve_worker_metrics(port, key="worker-key", addr="127.0.0.1")
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        assert requests.get(url, timeout=10).status_code == 401
        before = samples(requests.get(url, headers={"Authorization": "Bearer worker-key"}, timeout=10).text)
        metrics.observe_inference("port_probe_model", "cuda", 0.02, 4)
        response = requests.get(url, headers={"Authorization": "Bearer worker-key"}, timeout=10)
        assert response.status_code == 200
        after = samples(response.text)
    finally:
        server.shutdown()
    probe = {"model": "port_probe_model", "provider": "cuda"}
    assert (
        value(after, "visage_inference_seconds_count", **probe)
        - value(before, "visage_inference_seconds_count", **probe)
        == 1
    )
    assert (
        value(after, "visage_inference_batch_size_sum", model="port_probe_model")
        - value(before, "visage_inference_batch_size_sum", model="port_probe_model")
        == 4
    )
    # Queue depth and job states come from the web's /metrics only (never counted twice).
    assert not any(name.startswith("visage_queue_depth") for name, _ in after)


@pytest.mark.parametrize("raw,expected", [(None, "none"), ("", "none"), ("x" * 200, "x" * 64)])
def test_label_values_are_bounded(raw, expected):
    assert metrics.bounded(raw) == expected
    assert metrics.bounded("surprise", ("a", "b")) == "other"
