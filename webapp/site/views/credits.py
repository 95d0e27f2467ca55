"""The site's money pages: buying credit packs (Stripe, Alipay, WeChat Pay), its success and cancel pages, and
the account page's history (one row per job, 50 a page)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from billing import payment_providers, payments
from billing import reports as billing_reports
from billing import selectors as billing_selectors
from billing.choices import PaymentProvider
from billing.errors import BillingError
from billing.models import CheckoutSession, CreditPack

HISTORY_PAGE_SIZE = 50


def history_page(request: HttpRequest):
    """The page of the user's history asked for by `?page=` (a bad number gives the nearest page)."""
    paginator = Paginator(billing_reports.history_keys(user=request.user), HISTORY_PAGE_SIZE)
    page = paginator.get_page(request.GET.get("page"))
    return page, billing_reports.history_rows(list(page.object_list))


def money_context(request: HttpRequest) -> dict:
    balance = billing_selectors.account_balance(user=request.user)
    packs = list(payments.packs_active())
    return {
        "balance": balance,
        "balance_value": billing_selectors.credit_value(credits=balance.available),
        "packs": packs,
        "offers": [
            (pack, [(name, PaymentProvider(name).label) for name in payment_providers.providers_for(pack)])
            for pack in packs
        ],
        "payments_enabled": bool(payment_providers.providers_enabled()),
    }


@login_required
def credits(request: HttpRequest) -> HttpResponse:
    return render(request, "webapp/credits.html", money_context(request))


@login_required
@require_POST
def credits_buy(request: HttpRequest, pack_id: int) -> HttpResponse:
    pack = get_object_or_404(CreditPack, pk=pack_id, active=True)
    success = request.build_absolute_uri(reverse("credits-success")) + "?session_id={CHECKOUT_SESSION_ID}"
    try:
        started = payments.checkout_start(
            user=request.user,
            pack=pack,
            provider=request.POST.get("provider") or PaymentProvider.STRIPE,
            site_url=request.build_absolute_uri("/"),
            success_url=success,
            cancel_url=request.build_absolute_uri(reverse("credits-cancel")),
        )
    except BillingError as exc:
        messages.error(request, str(exc.detail))
        return render(request, "webapp/credits.html", money_context(request), status=exc.status_code)
    if started.code_url:  # WeChat Pay Native: the buyer scans it, then the page shows the credits
        return render(request, "webapp/credits_wechatpay.html", {**money_context(request), "started": started})
    return redirect(started.url, permanent=False)


@login_required
def credits_success(request: HttpRequest) -> HttpResponse:
    session = CheckoutSession.objects.filter(
        stripe_session_id=request.GET.get("session_id", ""), account__user=request.user
    ).first()
    return render(
        request, "webapp/credits_done.html", {**money_context(request), "session": session, "ok": True}
    )


@login_required
def credits_cancel(request: HttpRequest) -> HttpResponse:
    return render(
        request, "webapp/credits_done.html", {**money_context(request), "session": None, "ok": False}
    )
