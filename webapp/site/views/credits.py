"""The site's money pages: buying credit packs (Stripe, Alipay, WeChat Pay), its success and cancel pages, and
the account page's history (one row per job, 50 a page)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

import qrcode
import qrcode.image.svg
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from billing import payment_providers, payments, top_up_requests
from billing import reports as billing_reports
from billing import selectors as billing_selectors
from billing.choices import PaymentProvider
from billing.errors import BillingError
from billing.models import CheckoutSession, CreditPack
from billing.pricing import money_text

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
        "open_requests": list(top_up_requests.top_up_requests_open(user=request.user)),
        "max_open_requests": top_up_requests.MAX_OPEN_PER_ACCOUNT,
    }


@login_required
def credits(request: HttpRequest) -> HttpResponse:
    return render(request, "webapp/credits.html", money_context(request))


def payment_code_svg(code_url: str) -> str:
    """WeChat Pay Native's `code_url` as the QR code the buyer scans with WeChat (扫一扫), inline SVG:
    a desktop browser cannot open the weixin:// link, and there was nothing on the page to scan."""
    image = qrcode.make(code_url, image_factory=qrcode.image.svg.SvgPathImage, box_size=10, border=4)
    return mark_safe(image.to_string(encoding="unicode"))  # our own SVG: paths of the URL's bits, no text


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
        return render(
            request,
            "webapp/credits_wechatpay.html",
            {**money_context(request), "started": started, "code_svg": payment_code_svg(started.code_url)},
        )
    return redirect(started.url, permanent=False)


@login_required
@require_POST
def credits_request(request: HttpRequest) -> HttpResponse:
    """Without a payment provider: ask the staff for a pack (or, with no packs, an amount)."""
    pack = None
    if request.POST.get("pack"):
        if not re.fullmatch(r"[0-9]{1,9}", request.POST["pack"]):  # a pack's id; anything else names none
            raise Http404("no such pack")
        pack = get_object_or_404(CreditPack, pk=int(request.POST["pack"]), active=True)
        amount = pack.credits
    else:
        try:
            amount = Decimal(request.POST.get("credits", "")).quantize(Decimal("0.01"))
        except (InvalidOperation, ValueError):
            amount = Decimal(0)
        if not amount.is_finite() or not Decimal("1") <= amount <= Decimal("100000"):
            messages.error(request, _("Please enter how many credits you need, from 1 to 100,000."))
            return render(request, "webapp/credits.html", money_context(request), status=400)
    try:
        top_up_requests.top_up_request_create(user=request.user, pack=pack, credits=amount)
    except top_up_requests.TooManyOpenRequests:
        messages.error(
            request, _("You already have requests waiting. An administrator will add the credits soon.")
        )
        return render(request, "webapp/credits.html", money_context(request), status=429)
    messages.success(
        request,
        _(
            "Request sent: an administrator will add %(credits)s credits to your account. "
            "They will show here once added."
        ) % {"credits": money_text(amount)},
    )
    return redirect("credits")


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
