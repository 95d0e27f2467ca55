"""The HTTP boundary to Stripe: Checkout Session creation and webhook verification, with the
`stripe` package. Tests replace `http_client` (the SDK's own HTTPClient interface) to answer
without a Stripe server; everything above it runs as in production.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import stripe
from django.conf import settings

from billing.payment_errors import BadSignature, PaymentProviderError, PaymentsNotConfigured

# None: the SDK's default (requests); tests put a stripe.HTTPClient subclass here.
http_client: stripe.HTTPClient | None = None


def configured() -> bool:
    return bool(settings.STRIPE_SECRET_KEY)


def webhook_configured() -> bool:
    return bool(settings.STRIPE_WEBHOOK_SECRET)


def _client() -> stripe.StripeClient:
    if not configured():
        raise PaymentsNotConfigured()
    return stripe.StripeClient(
        api_key=settings.STRIPE_SECRET_KEY,
        base_addresses={"api": settings.STRIPE_API_BASE},
        max_network_retries=2,
        http_client=http_client or stripe.RequestsClient(timeout=settings.STRIPE_TIMEOUT_S),
    )


@dataclass(frozen=True)
class CreatedSession:
    id: str
    url: str


def checkout_session_create(
    *,
    name: str,
    unit_amount_minor: int,
    currency: str,
    client_reference_id: str,
    metadata: dict[str, str],
    success_url: str,
    cancel_url: str,
    customer_email: str = "",
    idempotency_key: str = "",
) -> CreatedSession:
    """A Checkout Session in payment mode for one pack; returns its id and hosted URL."""
    params: dict[str, Any] = {
        "mode": "payment",
        "line_items": [
            {
                "quantity": 1,
                "price_data": {
                    "currency": currency.lower(),
                    "unit_amount": unit_amount_minor,
                    "product_data": {"name": name},
                },
            }
        ],
        "client_reference_id": client_reference_id,
        "metadata": metadata,
        "payment_intent_data": {"metadata": metadata},
        "success_url": success_url,
        "cancel_url": cancel_url,
    }
    if customer_email:
        params["customer_email"] = customer_email
    options = {"idempotency_key": idempotency_key} if idempotency_key else None
    try:
        session = _client().v1.checkout.sessions.create(params=params, options=options)
    except stripe.StripeError as exc:
        raise PaymentProviderError() from exc
    return CreatedSession(id=session.id, url=session.url)


def event_verify(*, payload: bytes, signature: str) -> dict[str, Any]:
    """Check the Stripe-Signature header with Stripe's library; the event as plain JSON data."""
    if not webhook_configured():
        raise PaymentsNotConfigured("Stripe webhooks are not configured on this server.")
    try:
        stripe.WebhookSignature.verify_header(payload, signature, settings.STRIPE_WEBHOOK_SECRET, 300)
    except stripe.SignatureVerificationError as exc:
        raise BadSignature() from exc
    try:
        event = json.loads(payload)
    except ValueError as exc:
        raise BadSignature("The payload is not JSON.") from exc
    if not isinstance(event, dict) or not event.get("id") or not event.get("type"):
        raise BadSignature("The payload is not a Stripe event.")
    return event
