"""API tokens in the Django admin: shown and revoked, never created or edited; users with a sign-in unlock."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from . import login_limits, services
from .forms import AdminLoginForm
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

    @admin.action(description=_("Revoke selected tokens"), permissions=["change"])
    def revoke(self, request, queryset) -> None:
        for token in queryset.filter(revoked_at__isnull=True):
            services.api_token_revoke(token=token)
        self.message_user(request, gettext("Revoked."), messages.SUCCESS)


# --- sign-in limits: the admin login is limited like the site's, and staff can unlock ---

admin.site.login_form = AdminLoginForm

User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class VisageUserAdmin(UserAdmin):
    actions = ["unlock_sign_in"]

    @admin.action(description=_("Unlock sign-in (clear failed attempts)"), permissions=["change"])
    def unlock_sign_in(self, request, queryset) -> None:
        for user in queryset:
            cleared = login_limits.login_unlock(username=user.get_username())
            self.message_user(
                request,
                gettext("%(user)s: %(count)s failed sign-in attempts cleared.")
                % {"user": user.get_username(), "count": cleared},
                messages.SUCCESS,
            )
