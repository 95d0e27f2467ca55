"""Errors of the payment providers' boundaries (Stripe, Alipay, WeChat Pay), each a specific
status and problem code."""

from __future__ import annotations

from rest_framework import status

from billing.errors import BillingError


class PaymentsNotConfigured(BillingError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "Card payments are not configured on this server; an administrator can add credits."
    default_code = "payments_not_configured"


class PaymentProviderError(BillingError):
    status_code = status.HTTP_502_BAD_GATEWAY
    default_detail = "The payment provider could not be reached; no payment was made. Try again shortly."
    default_code = "payment_provider_error"


class BadSignature(BillingError):
    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "The Stripe-Signature header does not match this payload."
    default_code = "bad_signature"


class StaleNotification(BillingError):
    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "The payment notification is older than 5 minutes (or dated in the future); refused."
    default_code = "stale_notification"


class UnknownPaymentProvider(BillingError):
    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "No such payment provider on this server."
    default_code = "unknown_payment_provider"


class PackCurrencyUnsupported(BillingError):
    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "This payment provider does not take the pack's currency."
    default_code = "pack_currency_unsupported"
