from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from moderation import signals
from webapp.telemetry import metrics


class OpsConfig(AppConfig):
    """Operations: health, metrics, embedded servers and the management commands (no models)."""

    name = "webapp.ops"
    label = "ops"
    verbose_name = "Visage operations"

    def ready(self) -> None:
        signals.screened.connect(_count_moderation_decision, dispatch_uid="visage-moderation-metrics")
        if settings.TRACING:
            try:
                from . import tracing_setup  # noqa: PLC0415 - the optional `tracing` extra: imported only when on
            except ImportError as exc:
                raise ImproperlyConfigured(
                    f"VISAGE_TRACING needs the tracing extra (pip install '.[tracing]'): {exc}"
                ) from exc
            tracing_setup.configure()


def _count_moderation_decision(sender, *, stage: str, decision: str, check: str, **kwargs) -> None:
    metrics.MODERATION_DECISIONS.labels(
        stage=metrics.bounded(stage), decision=metrics.bounded(decision), check=metrics.bounded(check)
    ).inc()
