"""Money finer than the account's currency unit: the balance a hold or a debit is checked against is
rounded down (never more than the ledger holds), and credits by hand come in whole units."""

from __future__ import annotations

import uuid
from dataclasses import replace
from decimal import Decimal

import pytest

from billing import selectors, services
from billing.errors import InsufficientCredit
from billing.models import LedgerEntry, PricePlan

pytestmark = pytest.mark.django_db


def _plan(currency: str, exponent: int) -> PricePlan:
    plan = PricePlan(
        name=currency, unit_price=Decimal("10"), coefficient_720p=Decimal(1), coefficient_1080p=Decimal(2),
        weight_fast=Decimal(1), weight_standard=Decimal(1), weight_hq=Decimal(1),
        minimum_charge=Decimal(1).scaleb(-exponent), currency=currency, minor_unit_exponent=exponent,
    )
    plan.full_clean()
    plan.save()
    return plan


def _ledger_available(account) -> Decimal:
    totals = LedgerEntry.objects.filter(account=account).aggregate(
        balance=selectors.balance_expression(), held=selectors.held_expression()
    )
    return totals["balance"] - totals["held"]


@pytest.fixture
def fils_then_yen(user_a):
    """101.505 credited on a three-decimal plan (KWD), then the account moved to a yen plan: the
    ledger holds 101.505, finer than a yen."""
    account = services.account_get_or_create(user=user_a)
    account.plan = _plan("KWD", 3)
    account.save()
    services.account_top_up(user=user_a, amount=Decimal("101.505"), actor=None, reason="admin credit")
    account.plan = _plan("JPY", 0)
    account.save()
    return account


def test_the_balance_shown_is_never_more_than_the_ledger_holds(fils_then_yen, user_a):
    money = selectors.account_balance(user=user_a)
    assert (money.balance, money.held, money.available) == (Decimal(101), Decimal(0), Decimal(101))


def test_a_hold_is_checked_against_the_balance_rounded_down(fils_then_yen, user_a):
    quote = services.quote_job(user=user_a, width=640, height=480, frames=1, mode="standard", resolution="720p")
    with pytest.raises(InsufficientCredit):  # 102 was "available" when 101.505 was rounded half-even
        services.hold_place(user=user_a, job_id=uuid.uuid4(), quote=replace(quote, amount=Decimal(102),
                                                                             hold_amount=Decimal(102)))
    services.hold_place(user=user_a, job_id=uuid.uuid4(), quote=replace(quote, amount=Decimal(101),
                                                                        hold_amount=Decimal(101)))
    assert _ledger_available(fils_then_yen) >= 0
    assert selectors.account_balance(user=user_a).available == 0


def test_a_debit_is_checked_against_the_balance_rounded_down(fils_then_yen, user_a):
    with pytest.raises(ValueError, match="at most 101"):
        services.account_adjust(user=user_a, amount=Decimal(-102), actor=None, reason="correction")
    assert _ledger_available(fils_then_yen) > 0


@pytest.mark.parametrize("amount", [Decimal("0.135"), Decimal("-0.005")])
def test_credits_by_hand_come_in_whole_units_of_the_currency(user_a, amount):
    services.account_top_up(user=user_a, amount=Decimal("1.00"), actor=None, reason="funding")
    change = services.account_top_up if amount > 0 else services.account_adjust
    with pytest.raises(ValueError, match="finer than the account's currency allows"):
        change(user=user_a, amount=amount, actor=None, reason="admin credit")
    assert selectors.account_balance(user=user_a).balance == Decimal("1.00")
