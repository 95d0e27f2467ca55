"""Turning OpenTelemetry on (VISAGE_TRACING=otlp|console; off when empty): a tracer provider with
a batch exporter, Django's instrumentation for requests, and webapp.telemetry.tracing's spans for
job stages and RQ tasks. Called once per process from OpsConfig.ready()."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from opentelemetry import trace  # the `tracing` extra: OpsConfig.ready() imports this module only when on
from opentelemetry.instrumentation.django import DjangoInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor

from webapp.telemetry import tracing

SERVICE_NAME = "visage"


def configure(exporter=None, *, processor: str = "batch") -> None:
    """Install a tracer provider exporting to `exporter` (or the one VISAGE_TRACING names)."""
    if exporter is None:
        exporter = _exporter(settings.TRACING, ConsoleSpanExporter)
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
    provider.add_span_processor(
        SimpleSpanProcessor(exporter) if processor == "simple" else BatchSpanProcessor(exporter)
    )
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument(tracer_provider=provider)
    tracing.enable(provider.get_tracer("visage"))


def _exporter(kind: str, console):
    if kind == "console":
        return console()
    if kind == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415 - own package, only when chosen
                OTLPSpanExporter,
            )
        except ImportError as exc:
            raise ImproperlyConfigured(
                "VISAGE_TRACING=otlp needs opentelemetry-exporter-otlp-proto-http (configured by the "
                "standard OTEL_EXPORTER_OTLP_* variables)"
            ) from exc
        return OTLPSpanExporter()
    raise ImproperlyConfigured(f"VISAGE_TRACING must be otlp, console or empty, not {kind!r}")
