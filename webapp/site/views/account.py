"""/account/: the balance and history, the user's API tokens (made and revoked here) and the devices
signed in to the app (signed out here); /account/delete/: the account deleted (accounts/deletion.py)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django.views.generic import FormView

from billing import selectors as billing_selectors
from webapp.accounts import deletion
from webapp.accounts import devices as account_devices
from webapp.accounts import selectors as account_selectors
from webapp.accounts import services as account_services
from webapp.accounts.forms import AccountDeleteForm
from webapp.accounts.models import ApiToken
from webapp.jobs import selectors as job_selectors

from ..forms import ApiTokenForm
from .credits import history_page, money_context
from .registration import LockedIs429

NEW_TOKEN_SESSION_KEY = "visage_new_api_token"


@login_required
def account(request: HttpRequest) -> HttpResponse:
    new_token = request.session.pop(NEW_TOKEN_SESSION_KEY, None)  # shown once, then gone
    return render(
        request, "webapp/account.html", _account_context(request, ApiTokenForm(), new_token=new_token)
    )


def _account_context(
    request: HttpRequest, token_form: ApiTokenForm, *, new_token: dict | None = None
) -> dict:
    page, rows = history_page(request)
    return {
        **money_context(request),
        "history_page": page,
        "history": rows,
        "tokens": account_selectors.api_tokens_for_user(user=request.user),
        "token_form": token_form,
        "new_token": new_token,
        "devices": account_devices.devices_for_user(user=request.user),
    }


@login_required
@require_POST
def token_create(request: HttpRequest) -> HttpResponse:
    form = ApiTokenForm(request.POST)
    if not form.is_valid():
        return render(
            request,
            "webapp/account.html",
            _account_context(request, form),
            status=400,
        )
    token, key = account_services.api_token_create(user=request.user, name=form.cleaned_data["name"])
    request.session[NEW_TOKEN_SESSION_KEY] = {"name": token.name, "key": key}
    return redirect("account")


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, id=token_id, owner=request.user, revoked_at__isnull=True)
    account_services.api_token_revoke(token=token)
    messages.success(request, _("Revoked the token “%(name)s”. Apps using it can no longer sign in.") % {"name": token.name})
    return redirect("account")


@login_required
@require_POST
def device_sign_out(request: HttpRequest, device_id: int) -> HttpResponse:
    device = get_object_or_404(account_devices.devices_for_user(user=request.user), id=device_id)
    account_devices.device_sign_out(device=device)
    messages.success(request, _("Signed out “%(name)s”. The app there must sign in again.") % {"name": device.name})
    return redirect("account")


class AccountDeleteView(LockedIs429, LoginRequiredMixin, FormView):
    """What deleting the account deletes and keeps, the password again, then everything deleted
    and the browser signed out. Staff accounts are closed in the admin (the page says so)."""

    form_class = AccountDeleteForm
    template_name = "webapp/account_delete.html"

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "user": self.request.user, "request": self.request}

    def get_context_data(self, **kwargs):
        user = self.request.user
        return {
            **super().get_context_data(**kwargs),
            "staff": user.is_staff or user.is_superuser,
            "jobs": job_selectors.jobs_for_user(user=user).count(),
            "balance": billing_selectors.account_balance(user=user),
        }

    def post(self, request, *args, **kwargs):
        if request.user.is_authenticated and (request.user.is_staff or request.user.is_superuser):
            return self.render_to_response(self.get_context_data(form=self.get_form()), status=403)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        deletion.account_delete(user=self.request.user)
        logout(self.request)
        messages.success(self.request, _("Your account and everything stored for it were deleted."))
        return redirect("dashboard")
