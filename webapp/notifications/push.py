"""One job's push to one device: short plain text in the device's language, the job id and state as
data (no image, nothing else about the job), sent by the device's platform."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from . import apns, fcm
from .models import PushDevice, PushPlatform

# By the job's final state: (title, body).
TEXTS = {
    "succeeded": (_("Your swap is ready"), _("Open the app to see it.")),
    "failed": (_("Your swap could not be made"), _("Nothing was charged. Open the app to see why.")),
    "rejected": (_("Your swap was not made"), _("The content was not allowed. Nothing was charged.")),
    "canceled": (_("Your swap was canceled"), _("Nothing was charged.")),
}


def enabled_platforms() -> set[str]:
    """The platforms this server is configured to push to (each is off without its credentials)."""
    return {platform for platform, on in ((PushPlatform.FCM, fcm.enabled()), (PushPlatform.APNS, apns.enabled())) if on}


def language_for(locale: str) -> str:
    """The supported language closest to the device's locale (BCP 47), else the site's."""
    try:
        return translation.get_supported_language_variant(locale.replace("_", "-").lower()) if locale else ""
    except LookupError:
        return ""


def job_push_text(state: str, *, locale: str = "") -> tuple[str, str]:
    title, body = TEXTS[state]
    with translation.override(language_for(locale) or settings.LANGUAGE_CODE):
        return str(title), str(body)


def job_push_send(device: PushDevice, *, job_id: uuid.UUID, state: str, push_id: uuid.UUID) -> None:
    """Raises errors.PushTokenInvalid (delete the device) or errors.PushFailed (try again)."""
    title, body = job_push_text(state, locale=device.locale)
    data = {"job_id": str(job_id), "state": state}
    if device.platform == PushPlatform.APNS:
        apns.send(token=device.token, topic=device.app_id, title=title, body=body, data=data,
                  collapse_id=str(job_id), push_id=str(push_id))
    else:
        fcm.send(token=device.token, title=title, body=body, data=data, collapse_key=str(job_id))
