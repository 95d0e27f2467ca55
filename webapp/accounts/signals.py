"""Saving or deleting a user or an API token drops the cached copies of their tokens
(selectors.api_token_by_key), e.g. a user made inactive in the admin is refused at once. A user
saved with a new password (set_password: the change and reset pages, the admin, `changepassword`)
signs out every device signed in to the account: the app's sessions end as the other browsers' do,
and the installs' push registrations go with them (a phone signed in by whoever had the old password
was still told of every job of the account)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_save

from webapp.notifications import push_devices

from . import devices, services
from .models import ApiToken


def _user_changed(sender, instance, **kwargs) -> None:
    services.forget_tokens(ApiToken.objects.filter(owner_id=instance.pk).values_list("key_sha256", flat=True))


def _password_changed(sender, instance, created=False, **kwargs) -> None:
    # AbstractBaseUser keeps the new raw password in `_password` from set_password() until its save()
    # has run the password validators' hooks, i.e. during this signal.
    if not created and getattr(instance, "_password", None) is not None:
        devices.devices_sign_out_all(user=instance, reason="password_changed")
        push_devices.push_devices_remove_all(user=instance)


def _token_changed(sender, instance, created=False, **kwargs) -> None:
    if not created:  # a new token has no cached copy
        services.forget_tokens([instance.key_sha256])


def connect() -> None:
    user = get_user_model()
    post_save.connect(_user_changed, sender=user, dispatch_uid="visage-token-cache-user-saved")
    post_delete.connect(_user_changed, sender=user, dispatch_uid="visage-token-cache-user-deleted")
    post_save.connect(_password_changed, sender=user, dispatch_uid="visage-devices-password-changed")
    post_save.connect(_token_changed, sender=ApiToken, dispatch_uid="visage-token-cache-token-saved")
    post_delete.connect(_token_changed, sender=ApiToken, dispatch_uid="visage-token-cache-token-deleted")
