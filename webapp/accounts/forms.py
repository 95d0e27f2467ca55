"""Sign-in forms for the site and the admin with the login limits of login_limits."""

from __future__ import annotations

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm

from .login_limits import LoginLocked, authenticate_limited


class LimitedAuthenticationMixin:
    """AuthenticationForm.clean with the password checked through authenticate_limited.

    `locked` holds the LoginLocked of a refused attempt, so the view can answer 429 with Retry-After.
    """

    locked: LoginLocked | None = None

    def clean(self):
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is not None and password:
            try:
                self.user_cache = authenticate_limited(self.request, username=username, password=password)
            except LoginLocked as exc:
                self.locked = exc
                raise forms.ValidationError(exc.message, code="locked") from None
            if self.user_cache is None:
                raise self.get_invalid_login_error()
            self.confirm_login_allowed(self.user_cache)
        return self.cleaned_data


class LoginForm(LimitedAuthenticationMixin, AuthenticationForm):
    pass


class AdminLoginForm(LimitedAuthenticationMixin, AdminAuthenticationForm):
    pass
