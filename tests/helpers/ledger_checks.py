"""The ledger's invariants after any payment case (Stripe, Alipay, WeChat Pay)."""

from __future__ import annotations

from decimal import Decimal

from django.db.models import Sum

from billing import selectors
from billing.choices import BALANCE_CREDIT_KINDS, BALANCE_DEBIT_KINDS, EntryKind
from billing.models import LedgerEntry


def invariants(user) -> None:
    """balance = Σ credits − Σ debits of the ledger; one purchase per paid session."""
    entries = LedgerEntry.objects.filter(account__user=user)
    credits = entries.filter(kind__in=BALANCE_CREDIT_KINDS).aggregate(s=Sum("amount"))["s"] or Decimal(0)
    debits = entries.filter(kind__in=BALANCE_DEBIT_KINDS).aggregate(s=Sum("amount"))["s"] or Decimal(0)
    assert selectors.account_balance(user=user).balance == (credits - debits).quantize(Decimal("0.01"))
    purchases = entries.filter(kind=EntryKind.PURCHASE)
    assert purchases.count() == purchases.values("payment_ref").distinct().count()
