from django.apps import AppConfig


class WebappConfig(AppConfig):
    name = "webapp"
    verbose_name = "Visage"
    default_auto_field = "django.db.models.BigAutoField"
