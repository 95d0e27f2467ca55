"""The admin site under the site's own name, with the moderation queue's length on every page.

Installed through webapp.apps.VisageAdminConfig (Django's documented way to replace admin.site), so
every `admin.register` keeps working.
"""

from __future__ import annotations

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from webapp.jobs import selectors as job_selectors


class VisageAdminSite(admin.AdminSite):
    site_header = _("Visage administration")
    site_title = _("Visage admin")
    index_title = _("Moderation, billing and jobs")
    enable_nav_sidebar = False  # the job list needs the width: every column on screen, one line per row

    def each_context(self, request):
        context = super().each_context(request)
        if request.user.is_active and request.user.is_staff:
            context["pending_review_count"] = job_selectors.jobs_awaiting_review().count()
        return context
