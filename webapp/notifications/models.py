"""Push devices: where a user's app installs receive push notifications."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class PushPlatform(models.TextChoices):
    FCM = "fcm", "Firebase Cloud Messaging"
    APNS = "apns", "Apple Push Notification service"


class PushDevice(models.Model):
    """One app install's push token (FCM registration token or APNs device token) for its user.

    A token belongs to one install, so it is unique per platform: the same token registered again
    (by its user, or by another user who signed in on that phone) updates this row. Not a
    signed-in device (webapp.accounts.models.SignedInDevice): signing out does not remove it.
    """

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_devices")
    platform = models.CharField(max_length=8, choices=PushPlatform.choices)
    token = models.CharField(max_length=1024)
    app_id = models.CharField(max_length=255)  # the iOS bundle id (apns-topic) or the Android package name
    name = models.CharField(max_length=100, blank=True)  # as the app names it ("Ana's iPhone")
    locale = models.CharField(max_length=35, blank=True)  # BCP 47, the language of its pushes
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)  # its latest registration

    class Meta:
        ordering = ["-updated_at"]
        constraints = [models.UniqueConstraint(fields=["platform", "token"], name="push_device_one_per_token")]

    def __str__(self) -> str:
        return f"{self.get_platform_display()} device {self.name or self.id} of {self.owner_id}"
