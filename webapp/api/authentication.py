"""Bearer tokens for the mobile app: `Authorization: Bearer vsg_…`. Only key hashes are stored."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from webapp.accounts import selectors, services


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keywords = ("bearer", "token")

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].decode(errors="replace").lower() not in self.keywords:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Invalid Authorization header: use 'Bearer <token>'.")
        key = header[1].decode(errors="replace")
        token = selectors.api_token_by_key(key)
        if token is None or not token.owner.is_active:
            raise exceptions.AuthenticationFailed("Invalid or revoked API token.")
        services.api_token_touch(token=token)
        request.api_token = token
        return token.owner, token

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Documents the bearer token in the OpenAPI schema (drf-spectacular finds this subclass itself)."""

    target_class = "webapp.api.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "A token from POST /api/v1/auth/token"}
