"""Registering and removing push devices (the API's /api/v1/devices)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from .models import PushDevice, PushPlatform

logger = logging.getLogger(__name__)

# Each finished job pushes to every device of its owner: the oldest registrations beyond this go.
MAX_PUSH_DEVICES_PER_USER = 20


class AppNotServed(Exception):
    """An APNs token for a bundle id this server does not push to (VISAGE_APNS_TOPIC)."""


def push_device_register(
    *, user, platform: str, token: str, app_id: str, name: str = "", locale: str = ""
) -> tuple[PushDevice, bool]:
    """Register (True) or update (False) the install's token. A token is one install's: registered by
    another user (who signed in on that phone), it becomes this user's new device, and the previous
    owner's row goes with its pushes still owed (they are not this user's news)."""
    if platform == PushPlatform.APNS and settings.APNS_TOPIC and app_id not in settings.APNS_TOPIC:
        raise AppNotServed(
            f"This server sends APNs pushes to {', '.join(settings.APNS_TOPIC)} only, not to {app_id}."
        )
    fields = {"platform": platform, "token": token, "app_id": app_id, "name": name, "locale": locale}
    try:
        return _register(user, **fields)
    except IntegrityError:
        # Another user registered the token between our delete and insert (both signed in on that
        # phone at once): once more, the last to register has it, as if they came one by one.
        return _register(user, **fields)


@transaction.atomic
def _register(user, *, platform: str, token: str, app_id: str, name: str, locale: str) -> tuple[PushDevice, bool]:
    PushDevice.objects.filter(platform=platform, token=token).exclude(owner=user).delete()
    device, created = PushDevice.objects.update_or_create(
        platform=platform, token=token, owner=user, defaults={"app_id": app_id, "name": name, "locale": locale}
    )
    stale = push_devices_for_user(user=user).values_list("id", flat=True)[MAX_PUSH_DEVICES_PER_USER:]
    PushDevice.objects.filter(id__in=list(stale)).delete()
    return device, created


def push_device_remove(*, device: PushDevice) -> None:
    PushDevice.objects.filter(id=device.id).delete()


def push_device_remove_invalid(*, device_id: int, reason: str) -> None:
    """The provider said the token is dead: no push goes to it again."""
    if PushDevice.objects.filter(id=device_id).delete()[0]:
        logger.info("push device %s removed: %s", device_id, reason)


def push_devices_remove_all(*, user) -> int:
    """Every install's registration of `user` (a password change: a phone signed in by whoever had the
    old password must not go on being told of the account's jobs); how many. The owner's own apps
    register again when they sign in with the new password."""
    return PushDevice.objects.filter(owner=user).delete()[1].get(PushDevice._meta.label, 0)


def push_devices_for_user(*, user) -> QuerySet[PushDevice]:
    return PushDevice.objects.filter(owner=user).order_by("-updated_at", "-id")
