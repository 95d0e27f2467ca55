"""The Django app `webapp` keeps its label, tables and migration history; its models live in the
packages that own them and are registered here, where Django looks for them."""

from webapp.accounts.models import ApiToken, DeviceToken, SignedInDevice
from webapp.jobs.models import Job, PushDelivery, ShareLink, Upload
from webapp.notifications.models import PushDevice

__all__ = [
    "ApiToken", "DeviceToken", "Job", "PushDelivery", "PushDevice", "ShareLink", "SignedInDevice", "Upload",
]
