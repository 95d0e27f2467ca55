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
    if parsed.username is not None or parsed.password is not None:
        # Deliveries send no Authorization (the signature proves the sender), and the URL is shown in
        # every job answer and webhook body: a password in it would be shown, never used.
        raise WebhookRefused(
            "The webhook URL must not carry a user name or password; check the webhook-signature header instead."
        )
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


# IPv6 prefixes whose low 32 bits are an IPv4 address a gateway forwards to: NAT64's well-known
# and local-use prefixes (RFC 6052, RFC 8215) and the deprecated IPv4-compatible form (::a.b.c.d).
EMBEDDING_PREFIXES = tuple(
    ipaddress.IPv6Network(prefix) for prefix in ("64:ff9b::/96", "64:ff9b:1::/48", "::/96")
)
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def embedded_ipv4(address: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address also reaches: IPv4-mapped, 6to4, Teredo, NAT64, ::a.b.c.d."""
    if address.version == 4:
        return []
    found = [address.ipv4_mapped, address.sixtofour, *(address.teredo or ())]
    if any(address in prefix for prefix in EMBEDDING_PREFIXES):
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return [ipv4 for ipv4 in found if ipv4 is not None]


def is_public_address(address: IPAddress) -> bool:
    """Global unicast, and so is every IPv4 address it embeds: `[64:ff9b::a9fe:a9fe]` (NAT64) and
    `[2002:a9fe:a9fe::]` (6to4) count as global IPv6 but reach 169.254.169.254 through a gateway."""
    # Python counts IPv4 multicast (224/4) as global: no webhook is sent to a group address.
    reached = [address, *embedded_ipv4(address)]
    return all(a.is_global and not a.is_multicast for a in reached)


def check_webhook_url_at_submit(url: str) -> None:
    host = check_webhook_url_shape(url)
    if settings.WEBHOOK_ALLOW_PRIVATE:
        return
    address = ip_literal(host)
    if address is not None:
        if not is_public_address(address):
            raise WebhookRefused(f"Webhooks are never delivered to private or loopback addresses ({address}).")
        return
    if host == "localhost" or host.endswith(PRIVATE_SUFFIXES) or "." not in host:
        raise WebhookRefused(f"Webhooks are never delivered to local or internal host names ({host}).")
