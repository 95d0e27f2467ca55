"""Optional OpenTelemetry tracing (VISAGE_TRACING; off by default). Spans for the job's stages
come from `metrics.timed_stage`; a task's span continues the trace of the request that enqueued
it through the RQ meta (`traceparent`), so one trace runs from the API call to the result.

Everything here is a no-op unless webapp.ops.tracing_setup.configure() installed a tracer provider (the
opentelemetry packages are the optional `tracing` extra).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

try:  # the optional `tracing` extra; without it _tracer stays None and nothing below touches these
    from opentelemetry import context as otel_context
    from opentelemetry import propagate
except ImportError:
    otel_context = propagate = None

_tracer = None


def enable(tracer) -> None:
    global _tracer
    _tracer = tracer


def enabled() -> bool:
    return _tracer is not None


def span(name: str, **attributes):
    """A span around the enclosed block when tracing is on; otherwise nothing."""
    if _tracer is None:
        return nullcontext()
    return _tracer.start_as_current_span(
        name, attributes={k: v for k, v in attributes.items() if v is not None}
    )


def inject() -> dict:
    """The current trace context as carrier fields (for an RQ task's meta); {} when off."""
    if _tracer is None:
        return {}
    carrier: dict = {}
    propagate.inject(carrier)
    return carrier


@contextmanager
def continued(carrier: dict | None, name: str, **attributes) -> Iterator[None]:
    """A span continuing the trace in `carrier` (a task's meta); nothing when tracing is off."""
    if _tracer is None:
        yield
        return
    token = otel_context.attach(propagate.extract(carrier or {}))
    try:
        with span(name, **attributes):
            yield
    finally:
        otel_context.detach(token)
