from __future__ import annotations

import logging

from django.apps import AppConfig
from django.conf import settings

logger = logging.getLogger(__name__)


class WebappConfig(AppConfig):
    name = "webapp"
    verbose_name = "Visage"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        if settings.PRODUCTION and not settings.EMAIL_HOST:
            logger.warning(
                "EMAIL_HOST is not set: password-reset emails are printed to this log instead of sent."
            )
        if not settings.MARK_ENABLED:
            logger.warning(
                "VISAGE_MARK_ENABLED=0: results are downloaded WITHOUT the visible AI-generated mark."
            )
        if not settings.PROVENANCE_ENABLED:
            logger.warning("VISAGE_PROVENANCE_ENABLED=0: results are NOT signed with C2PA Content Credentials.")
