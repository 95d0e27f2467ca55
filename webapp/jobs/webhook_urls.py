"""Where a webhook may go: checked at submit (no DNS) and again at delivery (with DNS).

At submit, the API refuses what can be known from the URL alone, so a job never spends screening and
GPU time only for its webhook to be refused: a scheme other than http/https, no host, and, unless
VISAGE_WEBHOOK_ALLOW_PRIVATE, an IP literal that is not public (also the shorthand forms such as
`127.1` or `2130706433` that resolvers accept), `localhost`, names under `.localhost`, `.local`,
`.internal`, `.localdomain`, `.home.arpa`, `.svc`, and single-label names (`redis`, `minio`: inside
a cluster they resolve through the search domains to internal services).

No DNS at submit: a lookup on the request path can hold a web worker for the resolver's timeout, and
an address seen at submit says nothing about the one at delivery (DNS rebinding), so the delivery
check in webhooks.py, which resolves the name, stays the authority.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlparse

from django.conf import settings

SCHEMES = ("http", "https")
PRIVATE_SUFFIXES = (".localhost", ".local", ".internal", ".localdomain", ".home.arpa", ".svc")


class WebhookRefused(Exception):
    """The URL points somewhere we never deliver to (another scheme; a private network in production)."""


def check_webhook_url_shape(url: str) -> str:
    """The URL's host name; raises WebhookRefused for a scheme other than http(s) or no host."""
    try:
        parsed = urlparse(url)
        parsed.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        raise WebhookRefused(f"The webhook URL is not valid ({exc}).") from exc
    if parsed.scheme.lower() not in SCHEMES:
        raise WebhookRefused(f"Webhook URLs must be http:// or https://, not {parsed.scheme or 'no scheme'}.")
    if not parsed.hostname:
        raise WebhookRefused("The webhook URL has no host.")
    return parsed.hostname.rstrip(".").lower()


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host written as an IP means, in any form resolvers accept; None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))  # 127.1, 2130706433, 0x7f.0.0.1
    except OSError:
        return None


def check_webhook_url_at_submit(url: str) -> None:
    host = check_webhook_url_shape(url)
    if settings.WEBHOOK_ALLOW_PRIVATE:
        return
    address = ip_literal(host)
    if address is not None:
        if not address.is_global:
            raise WebhookRefused(f"Webhooks are never delivered to private or loopback addresses ({address}).")
        return
    if host == "localhost" or host.endswith(PRIVATE_SUFFIXES) or "." not in host:
        raise WebhookRefused(f"Webhooks are never delivered to local or internal host names ({host}).")
