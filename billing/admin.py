"""Billing in the Django admin: plans, accounts with their money, the read-only ledger, refunds,
manual top-ups/adjustments and the monthly usage report (with CSV export)."""

from __future__ import annotations

from decimal import Decimal

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from billing import exports, reports, selectors, services, top_up_requests
from billing.choices import EntryKind
from billing.errors import BillingError
from billing.forms import AccountCreditForm, RefundForm, UsageReportFilterForm
from billing.models import (
    Account,
    Charge,
    CheckoutSession,
    CreditPack,
    GpuCalibration,
    GpuSample,
    LedgerEntry,
    ModeRun,
    PricePlan,
    StripeEvent,
    TopUpRequest,
)

# The usage report's column headers on the page (the CSV keeps exports.USAGE_COLUMNS' names).
USAGE_HEADERS = {
    "month": _("Month"), "user_id": _("User id"), "username": _("User"), "currency": _("Currency"),
    "jobs": _("Jobs"), "frames": _("Frames"), "gpu_seconds": _("GPU seconds"), "charged": _("Charged"),
    "refunded": _("Refunded"), "net": _("Net"), "gpu_cost": _("GPU cost"), "margin": _("Margin"),
    "capped_jobs": _("Capped jobs"),
}  # fmt: skip


@admin.register(PricePlan)
class PricePlanAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "is_default",
        "unit_price",
        "minimum_charge",
        "currency",
        "gpu_queue",
        "updated_at",
    ]
    list_filter = ["gpu_queue", "currency"]
    fieldsets = [
        (None, {"fields": ["name", "is_default", "gpu_queue"]}),
        (
            _("Price"),
            {
                "fields": [
                    "unit_price",
                    "minimum_charge",
                    "currency",
                    "minor_unit_exponent",
                ]
            },
        ),
        (
            _("Resolution coefficients"),
            {"fields": ["coefficient_720p", "coefficient_1080p", "original_coefficient_tiers"]},
        ),
        (_("Mode weights"), {"fields": ["weight_fast", "weight_standard", "weight_hq"]}),
    ]

    def save_model(self, request, obj, form, change):
        with transaction.atomic():
            if obj.is_default:
                # Exactly one default: the new one replaces the old in the same transaction.
                PricePlan.objects.filter(is_default=True).exclude(pk=obj.pk).update(is_default=False)
            elif change and PricePlan.objects.filter(pk=obj.pk, is_default=True).exists():
                obj.is_default = True
                messages.warning(request, gettext("A plan stays the default until another plan is made the default."))
            super().save_model(request, obj, form, change)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and (obj.is_default or obj.accounts.exists()):
            return False
        return super().has_delete_permission(request, obj)


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ["user", "plan", "balance", "held", "available", "flagged_at", "created_at"]
    list_select_related = ["user", "plan"]
    list_filter = ["plan", ("flagged_at", admin.EmptyFieldListFilter)]
    search_fields = ["user__username", "user__email"]
    autocomplete_fields = ["user"]
    readonly_fields = ["created_at", "money", "credit_link", "flagged_at", "flag_reason"]

    def get_queryset(self, request):
        return selectors.accounts_with_balances().annotate(
            minor_unit_exponent=Coalesce(
                F("plan__minor_unit_exponent"), Value(selectors.default_plan().minor_unit_exponent)
            )
        )

    @staticmethod
    def _money(obj: Account, amount: Decimal | None) -> Decimal:
        return Decimal(amount or 0).quantize(Decimal(1).scaleb(-obj.minor_unit_exponent))

    def get_readonly_fields(self, request, obj=None):
        fields = [*self.readonly_fields, "user"] if obj is not None else list(self.readonly_fields)
        if not self.has_credit_permission(request):
            fields.remove("credit_link")
        return fields

    def has_credit_permission(self, request: HttpRequest) -> bool:
        """Adding or taking away credits moves money: the ledger's add permission, as for the top-up
        requests' actions and refunds (changing an account only assigns its plan)."""
        return request.user.has_perm("billing.add_ledgerentry")

    @admin.display(description=_("Balance"), ordering="balance")
    def balance(self, obj: Account):
        return self._money(obj, obj.balance)

    @admin.display(description=_("Held"), ordering="held")
    def held(self, obj: Account):
        return self._money(obj, obj.held)

    @admin.display(description=_("Available"), ordering="available")
    def available(self, obj: Account):
        return self._money(obj, obj.available)

    @admin.display(description=_("Money (from the ledger)"))
    def money(self, obj: Account) -> str:
        balance = selectors.account_balance_for(account=obj)
        return gettext("balance %(balance)s, held %(held)s, available %(available)s %(currency)s") % {
            "balance": balance.balance,
            "held": balance.held,
            "available": balance.available,
            "currency": balance.currency,
        }

    @admin.display(description=_("Top-up / adjustment"))
    def credit_link(self, obj: Account) -> str:
        if obj.pk is None:
            return "-"
        url = reverse("admin:billing_account_credit", args=[obj.pk])
        return format_html('<a class="button" href="{}">{}</a>', url, gettext("Top up or adjust…"))

    def get_urls(self):
        return [
            path(
                "<int:account_id>/credit/",
                self.admin_site.admin_view(self.credit_view),
                name="billing_account_credit",
            ),
            *super().get_urls(),
        ]

    def credit_view(self, request: HttpRequest, account_id: int) -> HttpResponse:
        account = get_object_or_404(Account.objects.select_related("user"), pk=account_id)
        if not (self.has_change_permission(request, account) and self.has_credit_permission(request)):
            return HttpResponse(status=403)
        form = AccountCreditForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            service = services.account_top_up if data["kind"] == EntryKind.TOP_UP else services.account_adjust
            try:
                entry = service(
                    user=account.user, amount=data["amount"], actor=request.user, reason=data["reason"]
                )
            except ValueError as exc:
                form.add_error(None, str(exc))
            else:
                self.message_user(
                    request,
                    gettext("%(kind)s of %(amount)s recorded for %(user)s.")
                    % {"kind": entry.get_kind_display(), "amount": entry.amount, "user": account.user},
                )
                return HttpResponseRedirect(reverse("admin:billing_account_change", args=[account.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Top up or adjust: %(user)s") % {"user": account.user},
            "opts": self.model._meta,
            "account": account,
            "money": selectors.account_balance_for(account=account),
            "form": form,
        }
        return TemplateResponse(request, "admin/billing/account_credit.html", context)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "account", "kind", "amount", "job_id", "actor", "reason"]
    list_filter = ["kind", "created_at"]
    list_select_related = ["account__user", "actor"]
    search_fields = ["account__user__username", "job_id", "reason"]
    date_hierarchy = "created_at"
    actions = ["refund_jobs"]
    change_list_template = "admin/billing/ledgerentry_change_list.html"

    def get_actions(self, request):
        # Read-only models lose "delete selected"; keep our refund action for users who may refund.
        actions = super().get_actions(request)
        if not request.user.has_perm("billing.add_ledgerentry") and not request.user.is_superuser:
            actions.pop("refund_jobs", None)
        return actions

    @admin.action(description=_("Refund the selected captured jobs"))
    def refund_jobs(self, request: HttpRequest, queryset):
        captures = list(queryset.filter(kind=EntryKind.CAPTURE).select_related("account__user"))
        if not captures:
            self.message_user(request, gettext("Select capture entries to refund."), messages.WARNING)
            return None
        form = RefundForm(request.POST if "apply" in request.POST else None)
        if "apply" in request.POST and form.is_valid():
            refunded = 0
            for capture in captures:
                try:
                    services.job_refund(
                        job_id=capture.job_id, actor=request.user, reason=form.cleaned_data["reason"]
                    )
                    refunded += 1
                except BillingError as exc:
                    self.message_user(
                        request,
                        gettext("Job %(job)s: %(detail)s") % {"job": capture.job_id, "detail": exc.detail},
                        messages.WARNING,
                    )
            self.message_user(request, gettext("Refunded %(count)s job(s).") % {"count": refunded})
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Refund jobs"),
            "opts": self.model._meta,
            "captures": captures,
            "form": form,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/billing/refund_confirm.html", context)

    def get_urls(self):
        return [
            path(
                "usage-report/",
                self.admin_site.admin_view(self.usage_report_view),
                name="billing_usage_report",
            ),
            *super().get_urls(),
        ]

    def usage_report_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_permission(request):
            return HttpResponse(status=403)
        form = UsageReportFilterForm(request.GET or None)
        month = form.cleaned_data.get("month") if form.is_valid() else None
        rows = reports.usage_report(month=month)
        if request.GET.get("export") == "csv":
            response = HttpResponse(exports.usage_csv(rows), content_type="text/csv; charset=utf-8")
            suffix = month.strftime("%Y-%m") if month else "all"
            response["Content-Disposition"] = f'attachment; filename="usage-{suffix}.csv"'
            return response
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Usage per user and month"),
            "opts": self.model._meta,
            "form": form,
            "rows": rows,
            "totals": reports.usage_totals(rows),
            "month": month,
            "headers": [USAGE_HEADERS.get(key, name) for key, name in exports.USAGE_COLUMNS.items()],
        }
        return TemplateResponse(request, "admin/billing/usage_report.html", context)


@admin.register(Charge)
class ChargeAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "job_id",
        "account",
        "frames",
        "mode",
        "resolution",
        "gpu_seconds",
        "quoted_amount",
        "computed_amount",
        "amount",
        "capped",
        "gpu_cost",
        "margin",
        "currency",
    ]
    list_filter = ["capped", "mode", "resolution", "created_at"]
    list_select_related = ["account__user"]
    search_fields = ["job_id", "account__user__username"]

    @admin.display(description=_("Margin (paid − GPU cost)"))
    def margin(self, obj: Charge) -> Decimal:
        return obj.amount - obj.gpu_cost


@admin.register(GpuCalibration)
class GpuCalibrationAdmin(admin.ModelAdmin):
    list_display = ["mode", "resolution", "gpu_seconds_per_frame", "samples", "updated_at"]
    readonly_fields = ["samples", "updated_at"]


@admin.register(GpuSample)
class GpuSampleAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at", "mode", "kind", "pixel_class", "pixels", "frames", "gpu_seconds_per_frame", "origin"
    ]
    list_filter = ["mode", "kind", "pixel_class", "origin"]


@admin.register(ModeRun)
class ModeRunAdmin(ReadOnlyAdmin):
    list_display = ["requested", "runs_as", "note", "updated_at"]


@admin.register(CreditPack)
class CreditPackAdmin(admin.ModelAdmin):
    list_display = ["name", "credits", "price", "currency", "active", "position"]
    list_editable = ["active", "position"]
    list_filter = ["active", "currency"]


@admin.register(CheckoutSession)
class CheckoutSessionAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "account",
        "credits",
        "price",
        "currency",
        "status",
        "paid_at",
        "reversed_at",
    ]
    list_filter = ["status", "currency"]
    list_select_related = ["account__user"]
    search_fields = ["stripe_session_id", "payment_intent", "account__user__username"]


@admin.register(StripeEvent)
class StripeEventAdmin(ReadOnlyAdmin):
    list_display = ["received_at", "type", "event_id", "outcome", "pending_payment_intent"]
    list_filter = ["type"]
    search_fields = ["event_id", "pending_payment_intent"]


@admin.register(TopUpRequest)
class TopUpRequestAdmin(admin.ModelAdmin):
    """Credits asked for on the credits page (installs without a payment provider)."""

    list_display = ["created_at", "user", "credits", "pack", "status", "note", "handled_by", "handled_at"]
    list_filter = ["status"]
    list_select_related = ["account__user", "pack", "handled_by"]
    search_fields = ["account__user__username", "account__user__email", "note"]
    readonly_fields = ["account", "pack", "credits", "note", "status", "top_up", "handled_by", "handled_at", "created_at"]
    actions = ["add_credits", "decline"]

    def has_add_permission(self, request):
        return False

    @admin.display(description=_("user"), ordering="account__user__username")
    def user(self, obj: TopUpRequest) -> str:
        return obj.account.user.get_username()

    # Both move money or close a request: the ledger's add permission, not the list's view one
    # (an action without `permissions` runs for anyone who can see the list).
    def has_fulfil_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("billing.add_ledgerentry")

    @admin.action(description=_("Add the credits asked for (and close)"), permissions=["fulfil"])
    def add_credits(self, request: HttpRequest, queryset):
        done = [
            r for r in (top_up_requests.top_up_request_fulfil(request_id=pk, actor=request.user)
                        for pk in queryset.values_list("pk", flat=True)) if r is not None
        ]
        self.message_user(
            request, gettext("Credits added for %(count)s request(s).") % {"count": len(done)}, messages.SUCCESS
        )

    @admin.action(description=_("Decline (no credits)"), permissions=["fulfil"])
    def decline(self, request: HttpRequest, queryset):
        declined = sum(
            top_up_requests.top_up_request_decline(request_id=pk, actor=request.user)
            for pk in queryset.values_list("pk", flat=True)
        )
        self.message_user(request, gettext("Declined %(count)s request(s).") % {"count": declined}, messages.SUCCESS)
