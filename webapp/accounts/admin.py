"""API tokens in the Django admin: shown and revoked, never created or edited."""

from __future__ import annotations

from django.contrib import admin, messages

from . import services
from .models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "prefix", "owner__username"]
    actions = ["revoke"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in ApiToken._meta.fields]  # the key hash is never editable

    def has_add_permission(self, request) -> bool:
        return False  # tokens are created by their owner, who sees the key once

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request, queryset) -> None:
        for token in queryset.filter(revoked_at__isnull=True):
            services.api_token_revoke(token=token)
        self.message_user(request, "Revoked.", messages.SUCCESS)
