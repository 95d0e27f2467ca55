"""Optional OpenTelemetry tracing, with the SDK's in-memory exporter: off by default; when on, one
trace runs from the API request through the RQ tasks into every job stage."""

from __future__ import annotations

import pytest

from tests.webapp.conftest import drain, post_job
from webapp.telemetry import tracing

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def spans():
    pytest.importorskip("opentelemetry.sdk", reason="the tracing extra is not installed")
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from webapp.ops import tracing_setup

    exporter = InMemorySpanExporter()
    tracing_setup.configure(exporter, processor="simple")
    try:
        yield exporter
    finally:
        tracing.enable(None)
        DjangoInstrumentor().uninstrument()


def test_tracing_is_off_by_default(settings):
    from webapp.jobs import dispatch

    assert settings.TRACING == ""
    assert not tracing.enabled()
    assert "trace" not in dispatch._meta(heartbeat_job_id="x")
    with tracing.span("nothing"):
        pass


def test_one_trace_from_the_request_to_every_stage(spans, api_a, astronaut_pair):
    source, target, _ = astronaut_pair
    assert post_job(api_a, source, target).status_code == 201
    drain()
    finished = spans.get_finished_spans()
    request = next(s for s in finished if s.kind.name == "SERVER" and "api/v1/jobs" in s.name)
    stages = {s.name: s for s in finished if s.name.startswith("stage ")}
    assert {
        "stage screening",
        "stage download",
        "stage encode",
        "stage upload",
        "stage output_screening",
    } <= set(stages)
    tasks = {s.name for s in finished if s.name.startswith("rq ")}
    assert {"rq screen_job", "rq run_job"} <= tasks
    in_job = [s for s in finished if s.name.startswith(("stage ", "rq "))]
    assert {s.context.trace_id for s in in_job} == {request.context.trace_id}
    assert stages["stage screening"].attributes["visage.stage"] == "screening"
