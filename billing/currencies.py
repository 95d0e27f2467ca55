"""A currency's minor unit, as the payment providers count amounts (integers in that unit).

Stripe takes most currencies in hundredths, but a zero-decimal currency in whole units (JPY 1000
is `1000`, not `100000`: sending hundredths charged the buyer 100 times the price) and a
three-decimal one in thousandths (with the last digit 0). ISK is counted in hundredths but only
whole krónur are accepted. Lists: https://docs.stripe.com/currencies (zero-decimal, three-decimal,
special cases). Alipay and WeChat Pay take CNY only (yuan with 2 decimals; WeChat Pay in fen).
"""

from __future__ import annotations

from decimal import Decimal

ZERO_DECIMAL = frozenset(
    {"BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF", "XPF"}
)
THREE_DECIMAL = frozenset({"BHD", "JOD", "KWD", "OMR", "TND"})
WHOLE_UNITS_ONLY = ZERO_DECIMAL | {"ISK"}


def minor_unit_exponent(currency: str) -> int:
    """How many decimals an amount in `currency` has in the providers' APIs."""
    code = currency.upper()
    return 0 if code in ZERO_DECIMAL else 3 if code in THREE_DECIMAL else 2


def minor_amount(amount: Decimal, currency: str) -> int:
    """`amount` as the integer the providers take (and report back) for `currency`."""
    return int(amount.scaleb(minor_unit_exponent(currency)).to_integral_value())


def price_problem(amount: Decimal, currency: str) -> str:
    """Why `amount` cannot be charged in `currency` ("" when it can)."""
    if currency.upper() in WHOLE_UNITS_ONLY and amount != amount.to_integral_value():
        return f"{currency.upper()} is charged in whole units: {amount} has a fraction."
    return ""
