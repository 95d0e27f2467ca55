"""Sign-in forms for the site and the admin, and the forms that ask for the password again (a
password change, deleting the account), all with the login limits of login_limits."""

from __future__ import annotations

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm
from django.utils.translation import gettext_lazy as _

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


class PasswordConfirmMixin:
    """The signed-in user's password asked again, checked through authenticate_limited: with a
    session left open (or taken) it could otherwise be guessed without limit, around the sign-in
    lockout. `locked` as in LimitedAuthenticationMixin; the form keeps the request in `request`."""

    locked: LoginLocked | None = None
    request = None

    def confirm_password(self, user, password: str) -> str:
        try:
            confirmed = authenticate_limited(self.request, username=user.get_username(), password=password)
        except LoginLocked as exc:
            self.locked = exc
            raise forms.ValidationError(exc.message, code="locked") from None
        if confirmed is None or confirmed.pk != user.pk:
            raise forms.ValidationError(
                PasswordChangeForm.error_messages["password_incorrect"], code="password_incorrect"
            )
        return password


class LimitedPasswordChangeForm(PasswordConfirmMixin, PasswordChangeForm):
    """Django's form with the old password confirmed through the sign-in limits."""

    def __init__(self, *args, request=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.request = request

    def clean_old_password(self):
        return self.confirm_password(self.user, self.cleaned_data["old_password"])


class AccountDeleteForm(PasswordConfirmMixin, forms.Form):
    """/account/delete/: the password again before the account is deleted (accounts/deletion.py)."""

    password = forms.CharField(
        label=_("Your password"), strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "current-password"})
    )

    def __init__(self, *args, user, request, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.request = request

    def clean_password(self):
        return self.confirm_password(self.user, self.cleaned_data["password"])
