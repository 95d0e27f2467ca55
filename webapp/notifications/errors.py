"""What a push provider's answer means to the outbox."""

from __future__ import annotations


class PushTokenInvalid(Exception):
    """The provider says this token will never work again (app uninstalled, token rotated, wrong
    app): the device is deleted, nothing is retried."""


class PushFailed(Exception):
    """This try failed (the provider is down or throttling, our credentials were refused): the
    outbox tries again later."""
