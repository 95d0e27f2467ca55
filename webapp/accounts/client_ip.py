"""The client's address, trusting X-Forwarded-For only as far as VISAGE_TRUSTED_PROXIES says.

With N trusted reverse proxies in front, each appends the address it received the request from,
so the client is the N-th entry from the right; anything to the left of it was written by the
client and is ignored. With none (the default), X-Forwarded-For is ignored and the socket's
address is the client. This is DRF's `NUM_PROXIES` rule, set from the same setting, so the API
throttles and the site's login limits key on the same address.
"""

from __future__ import annotations

from django.conf import settings


def client_ip(request) -> str:
    remote_addr = request.META.get("REMOTE_ADDR", "") or ""
    proxies = settings.TRUSTED_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if proxies <= 0 or not forwarded:
        return remote_addr
    addresses = [a.strip() for a in forwarded.split(",")]
    return addresses[-min(proxies, len(addresses))] or remote_addr
