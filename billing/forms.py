"""Admin forms for manual money moves (each requires a reason; the service records the actor)."""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.utils.translation import gettext_lazy as _

from billing.choices import EntryKind

MANUAL_KINDS = [
    (EntryKind.TOP_UP, _("Top-up (credit)")),
    (EntryKind.ADJUSTMENT, _("Adjustment (signed: negative = debit)")),
]


class AccountCreditForm(forms.Form):
    kind = forms.ChoiceField(label=_("Kind"), choices=MANUAL_KINDS)
    amount = forms.DecimalField(label=_("Amount"), max_digits=14, decimal_places=4)
    reason = forms.CharField(
        label=_("Reason"), max_length=500, required=True, strip=True, widget=forms.TextInput(attrs={"size": 60})
    )

    def clean(self):
        cleaned = super().clean()
        amount: Decimal | None = cleaned.get("amount")
        kind = cleaned.get("kind")
        if amount is not None and kind == EntryKind.TOP_UP and amount <= 0:
            self.add_error("amount", _("A top-up must be positive."))
        if amount is not None and kind == EntryKind.ADJUSTMENT and amount == 0:
            self.add_error("amount", _("An adjustment must not be zero."))
        return cleaned


class RefundForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason"), max_length=500, required=True, strip=True, widget=forms.TextInput(attrs={"size": 60})
    )


class UsageReportFilterForm(forms.Form):
    month = forms.DateField(
        label=_("Month"), required=False, input_formats=["%Y-%m"], help_text=_("YYYY-MM; empty: every month.")
    )
