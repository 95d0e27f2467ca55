"""Stripe's API answered in-process: the SDK's HTTP client replaced, so checkout runs through the
real `stripe` library without reaching api.stripe.com."""

from __future__ import annotations

import json
import uuid
from urllib.parse import parse_qs

import stripe


class FakeStripeHttp(stripe.HTTPClient):
    """Answers the SDK's HTTP requests as api.stripe.com would for Checkout Session creation."""

    name = "fake"

    def __init__(self):
        super().__init__()
        self.requests: list[tuple[str, str, dict]] = []

    def request(self, method, url, headers, post_data=None, *, _usage=None):
        form = {k: v[0] for k, v in parse_qs(post_data or "").items()}
        self.requests.append((method, url, form))
        session_id = f"cs_test_{uuid.uuid4().hex[:16]}"
        body = {
            "id": session_id,
            "object": "checkout.session",
            "mode": form.get("mode"),
            "url": f"https://checkout.stripe.com/c/pay/{session_id}",
            "payment_status": "unpaid",
            "amount_total": int(form["line_items[0][price_data][unit_amount]"]),
            "currency": form["line_items[0][price_data][currency]"],
        }
        return json.dumps(body), 200, {"request-id": "req_test"}

    def close(self):
        pass
