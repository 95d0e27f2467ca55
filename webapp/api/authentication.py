"""Bearer tokens: `Authorization: Bearer <token>`. Only key hashes are stored.

Two kinds: a signed-in device's short-lived access token (`vsa_…`, webapp.accounts.devices) and
the long-lived named API token (`vsg_…`, made on the account page or without device_name).
"""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from webapp.accounts import devices, selectors, services


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keywords = ("bearer", "token")

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].decode(errors="replace").lower() not in self.keywords:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Invalid Authorization header: use 'Bearer <token>'.")
        key = header[1].decode(errors="replace")
        if key.startswith(devices.ACCESS_PREFIX):
            return self._device(request, key)
        token = selectors.api_token_by_key(key)
        if token is None or not token.owner.is_active:
            raise exceptions.AuthenticationFailed("Invalid or revoked API token.")
        services.api_token_touch(token=token)
        request.api_token = token
        return token.owner, token

    def _device(self, request, key: str):
        check = devices.device_for_access_token(key)
        if check.expired:
            raise AccessTokenExpired()
        if check.device is None or not check.device.owner.is_active:
            raise exceptions.AuthenticationFailed("Invalid access token, or its device was signed out.")
        request.signed_in_device = check.device
        return check.device.owner, check.device

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


class AccessTokenExpired(exceptions.AuthenticationFailed):
    default_detail = "The access token has expired: get a new one from POST /api/v1/auth/refresh."
    default_code = "access_token_expired"


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Documents the bearer token in the OpenAPI schema (drf-spectacular finds this subclass itself)."""

    target_class = "webapp.api.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "An access token (with device_name, refreshed by POST /api/v1/auth/refresh) or a long-lived API token, from POST /api/v1/auth/token"}
