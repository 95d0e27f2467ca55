"""Billing errors. Each is a DRF APIException with a stable `default_code`, so the platform's
problem+json handler renders it; `extensions` holds extra members for the problem body."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from rest_framework import status
from rest_framework.exceptions import APIException

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

    def __init__(self, *, required: Decimal, available: Decimal, quote: Quote | None = None) -> None:
        self.required = required
        self.available = available
        self.quote = quote
        currency = f" {quote.currency}" if quote is not None else ""
        super().__init__(
            detail=f"This job needs {required}{currency} of credit; {available}{currency} is available.",
            code=self.default_code,
        )

    @property
    def extensions(self) -> dict[str, Any]:
        data: dict[str, Any] = {"required": str(self.required), "available": str(self.available)}
        if self.quote is not None:
            data["currency"] = self.quote.currency
        return data

    def problem_extra(self) -> dict[str, Any]:
        """Members added to the RFC 9457 body by the platform's problem handler."""
        return self.extensions


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
