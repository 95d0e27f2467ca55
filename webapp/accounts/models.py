"""API tokens for the mobile app."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A named bearer token for the mobile app. Only the SHA-256 of the key is stored."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    key_sha256 = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)  # shown in the UI so users can tell tokens apart
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class SignedInDevice(models.Model):
    """An app signed in on one named device (POST /api/v1/auth/token with device_name): it holds a
    short-lived access token and a rotating refresh token. Signing it out ends both at once."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="signed_in_devices")
    name = models.CharField(max_length=100)  # as the app names it ("Ana's iPhone")
    client = models.CharField(max_length=16, default="mobile")  # mobile | web: the defaults it gets
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    signed_out_at = models.DateTimeField(null=True, blank=True)
    signed_out_reason = models.CharField(max_length=32, blank=True)  # user | refresh_token_reused | password_changed

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.owner_id})"


class DeviceToken(models.Model):
    """One access or refresh token of a signed-in device; only the SHA-256 of the key is stored.
    A refresh token is used once: `rotated_at` is set when it is exchanged for the next pair."""

    ACCESS = "access"
    REFRESH = "refresh"

    device = models.ForeignKey(SignedInDevice, on_delete=models.CASCADE, related_name="tokens")
    kind = models.CharField(max_length=8, choices=[(ACCESS, "access"), (REFRESH, "refresh")])
    key_sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    rotated_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.kind} token of device {self.device_id}"
