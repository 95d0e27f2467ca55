"""Signing up, signing in and resetting a forgotten password (Django's auth views, the site's
templates in templates/registration/)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext

from billing import services as billing_services
from billing.pricing import money_text
from webapp.accounts import services as account_services
from webapp.accounts.forms import LimitedPasswordChangeForm, LoginForm

from .. import limits
from ..forms import SignupForm


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("dashboard")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if wait := limits.wait_s(request, "signup"):  # each sign-up gives credits: not a farm
            return limits.refused(request, "registration/signup.html", {"form": form}, wait)
        credits = settings.SIGNUP_CREDITS
        with transaction.atomic():
            user = form.save()
            if credits > 0:
                billing_services.account_top_up(
                    user=user, amount=credits, actor=None, reason=gettext_noop("sign-up credits")
                )
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        if credits > 0:
            messages.success(request, _("Welcome to Visage! We added %(credits)s free credits.") % {"credits": money_text(credits)})
        return redirect("upload")
    return render(request, "registration/signup.html", {"form": form})


class LockedIs429:
    """A form refused by the sign-in limits (its `locked`) answers 429 with Retry-After."""

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.locked is not None:
            response.status_code = 429
            response["Retry-After"] = str(form.locked.retry_after_s)
        return response


class LoginView(LockedIs429, auth_views.LoginView):
    """Django's login with the sign-in limits: a locked-out attempt is a 429 with Retry-After
    and the form says why and for how long."""

    form_class = LoginForm
    template_name = "registration/login.html"
    redirect_authenticated_user = True



class PasswordChangeView(LockedIs429, auth_views.PasswordChangeView):
    """Django's view; the old password counts against the sign-in limits (a locked attempt is a
    429 with Retry-After, as at sign-in)."""

    form_class = LimitedPasswordChangeForm
    template_name = "registration/password_change_form.html"

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "request": self.request}


def reset_link_lifetime() -> str:
    """How long a password-reset link works, in words ("24 hours", "3 days")."""
    seconds = int(settings.PASSWORD_RESET_TIMEOUT)
    if seconds < 2 * 3600:
        minutes = max(1, round(seconds / 60))
        return ngettext("%(count)d minute", "%(count)d minutes", minutes) % {"count": minutes}
    if seconds <= 48 * 3600:
        hours = round(seconds / 3600)
        return ngettext("%(count)d hour", "%(count)d hours", hours) % {"count": hours}
    days = round(seconds / 86400)
    return ngettext("%(count)d day", "%(count)d days", days) % {"count": days}


class PasswordResetView(auth_views.PasswordResetView):
    """Django's view; the email and the page also say how long the link works. Within the client's
    budget (limits) and the address's: past the address's, the page says "sent" as always (it
    never tells whether an account has that address) and no email goes out."""

    template_name = "registration/password_reset_form.html"
    email_template_name = "registration/password_reset_email.html"
    subject_template_name = "registration/password_reset_subject.txt"

    def form_valid(self, form):
        if wait := limits.wait_s(self.request, "password_reset"):
            return limits.refused(self.request, self.template_name, self.get_context_data(form=form), wait)
        if limits.wait_s(self.request, "password_reset", per=form.cleaned_data["email"].strip().lower()):
            return redirect(self.get_success_url())
        return super().form_valid(form)

    @property
    def extra_email_context(self) -> dict:  # read by form_valid; a property so tests can change the setting
        return {"link_lifetime": reset_link_lifetime()}


class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    template_name = "registration/password_reset_done.html"

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "link_lifetime": reset_link_lifetime()}


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """Django's view. A reset is how someone takes an account back: besides the sessions and the
    signed-in devices (ended by any password change, accounts.signals), the account's API tokens
    are revoked, since whoever knew the old password may have made some."""

    template_name = "registration/password_reset_confirm.html"

    def form_valid(self, form):
        response = super().form_valid(form)
        account_services.api_tokens_revoke_all(user=form.user)
        return response

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "link_lifetime": reset_link_lifetime()}
