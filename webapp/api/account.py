"""/api/v1/auth/token (log in / revoke) and /api/v1/me."""

from __future__ import annotations

from decimal import Decimal

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from billing import selectors as billing_selectors
from webapp.accounts import services
from webapp.accounts.login_limits import LoginLocked, authenticate_limited

from .authentication import BearerTokenAuthentication
from .throttles import AuthThrottle, ReadThrottle

PROBLEM = OpenApiResponse(description="RFC 9457 application/problem+json")


class TooManyFailedLogins(exceptions.Throttled):
    """429 with Retry-After: the username or the client address is locked out for a while."""

    default_code = "too_many_failed_logins"


class TokenView(APIView):
    class InputSerializer(serializers.Serializer):
        username = serializers.CharField()
        password = serializers.CharField(style={"input_type": "password"})
        name = serializers.CharField(required=False, default="API token", max_length=100)

        class Meta:
            ref_name = "TokenCreate"

    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField(help_text="Send as 'Authorization: Bearer <token>'. Shown once.")
        name = serializers.CharField()
        prefix = serializers.CharField()

        class Meta:
            ref_name = "Token"

    def get_permissions(self):
        return [AllowAny()] if self.request.method == "POST" else super().get_permissions()

    def get_throttles(self):
        return [AuthThrottle()] if self.request.method == "POST" else [ReadThrottle()]

    @extend_schema(operation_id="auth_token_create", request={"application/json": InputSerializer},
                   responses={201: OutputSerializer, 400: PROBLEM, 401: PROBLEM, 429: PROBLEM},
                   summary="Exchange username and password for an API token",
                   description="Failed attempts are limited per username and per client address; past the limit the "
                   "answer is 429 `too_many_failed_logins` with Retry-After, without checking the password.")
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            user = authenticate_limited(request, username=serializer.validated_data["username"],
                                        password=serializer.validated_data["password"])
        except LoginLocked as exc:
            raise TooManyFailedLogins(wait=exc.retry_after_s, detail=exc.message) from None
        if user is None:
            raise exceptions.AuthenticationFailed("Wrong username or password.")
        token, key = services.api_token_create(user=user, name=serializer.validated_data["name"])
        return Response({"token": key, "name": token.name, "prefix": token.prefix}, status=status.HTTP_201_CREATED)

    @extend_schema(operation_id="auth_token_revoke", responses={204: None, 401: PROBLEM},
                   summary="Revoke the token this request is authenticated with")
    def delete(self, request):
        token = getattr(request, "api_token", None)
        if token is None or not isinstance(request.successful_authenticator, BearerTokenAuthentication):
            raise exceptions.NotAuthenticated("Send the token to revoke as 'Authorization: Bearer <token>'.")
        services.api_token_revoke(token=token)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(APIView):
    throttle_classes = [ReadThrottle]

    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        email = serializers.EmailField(allow_blank=True)
        balance = serializers.CharField(help_text="Decimal string in the currency's minor unit, e.g. '499.95'")
        held = serializers.CharField(help_text="Credits held for unfinished jobs")
        available = serializers.CharField(help_text="balance − held: what a new job can hold")
        currency = serializers.CharField()
        plan = serializers.CharField()

        class Meta:
            ref_name = "Me"

    @extend_schema(operation_id="me_retrieve", responses={200: OutputSerializer, 401: PROBLEM},
                   summary="The caller, with balance and available credit")
    def get(self, request):
        balance = billing_selectors.account_balance(user=request.user)
        plan = billing_selectors.plan_for_user(user=request.user)
        minor_unit = Decimal(1).scaleb(-plan.minor_unit_exponent)
        return Response(self.OutputSerializer({
            "username": request.user.get_username(), "email": request.user.email or "",
            "balance": money_text(balance.balance, minor_unit), "held": money_text(balance.held, minor_unit),
            "available": money_text(balance.available, minor_unit), "currency": balance.currency, "plan": plan.name,
        }).data)


def money_text(amount: Decimal, minor_unit: Decimal) -> str:
    """The amount in the currency's minor unit, never "-0.00": SQLite sums decimals as floats, so
    0.30 − 0.10 − 0.20 comes back as −2.8e-17."""
    rounded = amount.quantize(minor_unit)
    return str(rounded.copy_abs() if rounded.is_zero() else rounded)
