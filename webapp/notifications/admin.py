"""Push devices in the Django admin: looked at and removed, never created or edited (apps register them)."""

from __future__ import annotations

from django.contrib import admin

from .models import PushDevice


@admin.register(PushDevice)
class PushDeviceAdmin(admin.ModelAdmin):
    list_display = ["id", "owner", "platform", "app_id", "name", "locale", "short_token", "updated_at"]
    list_filter = ["platform", "app_id"]
    search_fields = ["owner__username", "name", "app_id"]
    list_select_related = ["owner"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in PushDevice._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description="token")
    def short_token(self, device: PushDevice) -> str:
        return f"{device.token[:12]}…"
