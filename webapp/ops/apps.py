from django.apps import AppConfig


class OpsConfig(AppConfig):
    """Operations: health, metrics, embedded servers and the management commands (no models)."""

    name = "webapp.ops"
    label = "ops"
    verbose_name = "Visage operations"
