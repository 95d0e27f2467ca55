from __future__ import annotations

import logging

from django.apps import AppConfig
from django.conf import settings
from django.contrib.admin import apps as admin_apps

logger = logging.getLogger(__name__)


class WebappConfig(AppConfig):
    default = True  # this module also holds the admin's config, below
    name = "webapp"
    verbose_name = "Visage"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from webapp.accounts import signals  # noqa: PLC0415 - models are importable only once apps are ready
        from webapp.jobs import signals as job_signals  # noqa: PLC0415 - the same

        signals.connect()
        job_signals.connect()
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


class VisageAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the site's own AdminSite (name, moderation queue length)."""

    default = False  # named in INSTALLED_APPS; "webapp" itself is WebappConfig
    default_site = "webapp.admin_site.VisageAdminSite"
