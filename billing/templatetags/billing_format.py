"""The one formatter for amounts on pages: `{{ amount|credits }}` → "1234.50" (never "-0.00")."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django import template

from billing.pricing import money_text

register = template.Library()


@register.filter
def credits(value, exponent: int = 2) -> str:
    if value is None or value == "":
        return "—"
    try:
        amount = value if isinstance(value, Decimal) else Decimal(str(value))
    except InvalidOperation:
        return str(value)
    return money_text(amount, int(exponent))
