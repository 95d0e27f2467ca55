"""Billing errors. Each is a DRF APIException with a stable `default_code`, so the platform's
problem+json handler renders it; `extensions` holds extra members for the problem body."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext as _
from rest_framework import status
from rest_framework.exceptions import APIException

from billing.pricing import money_text

if TYPE_CHECKING:
    from billing.values import Quote


class BillingError(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The billing operation is not possible in the current state."
    default_code = "billing_conflict"

    @property
    def extensions(self) -> dict[str, Any]:
        return {}


class InsufficientCredit(BillingError):
    status_code = status.HTTP_402_PAYMENT_REQUIRED
    default_detail = "Not enough credit for this job."
    default_code = "insufficient_credits"

    def __init__(
        self, *, required: Decimal, available: Decimal, quote: Quote | None = None, cheapest: Decimal | None = None
    ) -> None:
        """`cheapest`: the lowest price of any quality and resolution for the same file, when the
        caller knows it; the message suggests another choice only when it costs less."""
        self.required = required
        self.available = available
        self.quote = quote
        self.cheapest = cheapest
        words = {"required": money_text(required), "available": money_text(available)}
        if cheapest is not None and cheapest < required:
            detail = _(
                "This swap costs %(required)s credits and you have %(available)s available. Add credits to your "
                "account to go on, or choose a lower quality or resolution (from %(cheapest)s credits)."
            ) % {**words, "cheapest": money_text(cheapest)}
        else:
            detail = _(
                "This swap costs %(required)s credits and you have %(available)s available. "
                "Add credits to your account to go on."
            ) % words
        super().__init__(
            detail=detail,
            code=self.default_code,
        )

    @property
    def extensions(self) -> dict[str, Any]:
        data: dict[str, Any] = {"required": str(self.required), "available": str(self.available)}
        if self.quote is not None:
            data["currency"] = self.quote.currency
            data["required_minor"] = int(self.required.scaleb(self.quote.minor_unit_exponent))
        return data

    def problem_extra(self, request=None) -> dict[str, Any]:
        """Members added to the RFC 9457 body by the platform's problem handler."""
        path = top_up_path()
        url = request.build_absolute_uri(path) if request is not None else path
        return {**self.extensions, "links": {"top_up": url}}


def top_up_path() -> str:
    """Where people buy credits (the site's page; its URL name is "credits")."""
    try:
        return reverse("credits")
    except NoReverseMatch:
        return "/account/credits/"


class PlanChanged(BillingError):
    """The account's price plan moved to another currency between the quote and the hold (an admin
    changed it at that moment): the quote means nothing in the new currency."""

    default_code = "price_changed"

    def __init__(self) -> None:
        super().__init__(
            detail=_(
                "Your price plan changed while this swap was being submitted, so nothing was charged. "
                "Please submit it again to see its new price."
            ),
            code=self.default_code,
        )


class NoHold(BillingError):
    default_detail = "No credit is held for this job."
    default_code = "no_hold"


class HoldClosed(BillingError):
    default_detail = "The credit held for this job was already released."
    default_code = "hold_closed"


class NotRefundable(BillingError):
    default_detail = "This job has no captured charge to refund."
    default_code = "not_refundable"


class AlreadyRefunded(BillingError):
    default_detail = "This job was already refunded."
    default_code = "already_refunded"
