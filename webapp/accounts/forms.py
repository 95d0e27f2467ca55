"""Sign-in forms for the site and the admin with the login limits of login_limits."""

from __future__ import annotations

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm

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


class LimitedPasswordChangeForm(PasswordChangeForm):
    """Django's form with the old password checked through authenticate_limited: with a session
    left open (or taken), the old password could be guessed without limit, around the sign-in
    lockout. `locked` as in LimitedAuthenticationMixin."""

    locked: LoginLocked | None = None

    def __init__(self, *args, request=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.request = request

    def clean_old_password(self):
        old_password = self.cleaned_data["old_password"]
        try:
            user = authenticate_limited(self.request, username=self.user.get_username(), password=old_password)
        except LoginLocked as exc:
            self.locked = exc
            raise forms.ValidationError(exc.message, code="locked") from None
        if user is None or user.pk != self.user.pk:
            raise forms.ValidationError(self.error_messages["password_incorrect"], code="password_incorrect")
        return old_password
