"""/api/v1/auth/token (log in / revoke), /api/v1/auth/refresh, /api/v1/auth/devices, /api/v1/me and
/api/v1/me/delete (the account deleted: webapp/accounts/deletion.py)."""

from __future__ import annotations

from decimal import Decimal

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from billing import selectors as billing_selectors
from webapp.accounts import deletion, devices, services
from webapp.accounts.login_limits import LoginLocked, authenticate_limited

from .authentication import BearerTokenAuthentication
from .fields import TextField
from .throttles import AuthThrottle, ReadThrottle

PROBLEM = OpenApiResponse(description="RFC 9457 application/problem+json")


class TooManyFailedLogins(exceptions.Throttled):
    """429 with Retry-After: the username or the client address is locked out for a while."""

    default_code = "too_many_failed_logins"


class DeviceOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    client = serializers.ChoiceField(choices=devices.CLIENTS)
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)

    class Meta:
        ref_name = "SignedInDevice"


class DeviceListItem(DeviceOutput):
    current = serializers.BooleanField(help_text="The device this request comes from")

    class Meta:
        ref_name = "SignedInDeviceListItem"


class TokenView(APIView):
    class InputSerializer(serializers.Serializer):
        username = TextField()
        password = TextField(style={"input_type": "password"})
        name = TextField(required=False, default="API token", max_length=100)
        device_name = TextField(
            required=False, max_length=100,
            help_text="For apps: sign this device in. The answer is a short-lived access token and a refresh "
            "token (rotated on every refresh) instead of a long-lived API token.",
        )
        client = serializers.ChoiceField(
            choices=devices.CLIENTS, default="mobile",
            help_text="With device_name: the kind of client, which sets its defaults (mobile: 720p, web: 1080p).",
        )

        class Meta:
            ref_name = "TokenCreate"

    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField(
            required=False, help_text="Without device_name: send as 'Authorization: Bearer <token>'. Shown once."
        )
        name = serializers.CharField(required=False)
        prefix = serializers.CharField(required=False)
        access_token = serializers.CharField(required=False, help_text="With device_name: the bearer token.")
        refresh_token = serializers.CharField(required=False, help_text="Exchange once at /api/v1/auth/refresh.")
        token_type = serializers.ChoiceField(choices=["Bearer"], required=False, help_text="With device_name.")
        expires_in = serializers.IntegerField(required=False, help_text="The access token's lifetime in seconds.")
        refresh_expires_in = serializers.IntegerField(
            required=False, help_text="The refresh token's lifetime in seconds."
        )
        device = DeviceOutput(required=False, help_text="With device_name: the device signed in.")

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
        device_name = serializer.validated_data.get("device_name", "").strip()
        if device_name:
            pair = devices.device_sign_in(
                user=user, device_name=device_name, client=serializer.validated_data["client"]
            )
            return Response(token_pair_payload(pair), status=status.HTTP_201_CREATED)
        token, key = services.api_token_create(user=user, name=serializer.validated_data["name"])
        return Response({"token": key, "name": token.name, "prefix": token.prefix}, status=status.HTTP_201_CREATED)

    @extend_schema(operation_id="auth_token_revoke", responses={204: None, 401: PROBLEM},
                   summary="Revoke the token this request is authenticated with (an access token: sign its "
                   "device out)")
    def delete(self, request):
        device = getattr(request, "signed_in_device", None)
        if device is not None:
            devices.device_sign_out(device=device)
            return Response(status=status.HTTP_204_NO_CONTENT)
        token = getattr(request, "api_token", None)
        if token is None or not isinstance(request.successful_authenticator, BearerTokenAuthentication):
            raise exceptions.NotAuthenticated("Send the token to revoke as 'Authorization: Bearer <token>'.")
        services.api_token_revoke(token=token)
        return Response(status=status.HTTP_204_NO_CONTENT)


def token_pair_payload(pair: devices.TokenPair) -> dict:
    return {
        "access_token": pair.access_token,
        "refresh_token": pair.refresh_token,
        "token_type": "Bearer",
        "expires_in": pair.access_expires_in_s,
        "refresh_expires_in": pair.refresh_expires_in_s,
        "device": device_payload(pair.device),
    }


def device_payload(device) -> dict:
    return {
        "id": device.id,
        "name": device.name,
        "client": device.client,
        "created_at": device.created_at,
        "last_used_at": device.last_used_at,
    }


class RefreshRefused(exceptions.AuthenticationFailed):
    """401 with the reason's own code (refresh_token_reused, refresh_token_expired, …)."""

    def __init__(self, refused: devices.RefreshRefused):
        super().__init__(refused.message)
        self.default_code = refused.code


class RefreshView(APIView):
    authentication_classes = [BearerTokenAuthentication]  # its WWW-Authenticate makes refusals 401s
    permission_classes = [AllowAny]
    throttle_classes = [AuthThrottle]

    class InputSerializer(serializers.Serializer):
        refresh_token = TextField(max_length=200)

        class Meta:
            ref_name = "TokenRefresh"

    @extend_schema(operation_id="auth_refresh", request=InputSerializer,
                   responses={200: TokenView.OutputSerializer, 400: PROBLEM, 401: PROBLEM, 429: PROBLEM},
                   summary="Exchange a refresh token (once) for a new access and refresh token",
                   description="Each refresh token works once. Presenting one again after it was exchanged "
                   "signs the device out (401 refresh_token_reused): someone else may hold a copy.")
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            pair = devices.device_refresh(refresh_token=serializer.validated_data["refresh_token"])
        except devices.RefreshRefused as exc:
            raise RefreshRefused(exc) from None
        return Response(token_pair_payload(pair))


class DeviceListView(APIView):
    throttle_classes = [ReadThrottle]

    @extend_schema(operation_id="auth_devices_list", responses={200: DeviceListItem(many=True), 401: PROBLEM},
                   summary="Devices signed in to your account")
    def get(self, request):
        current = getattr(getattr(request, "signed_in_device", None), "id", None)
        return Response([
            {**device_payload(device), "current": device.id == current}
            for device in devices.devices_for_user(user=request.user)
        ])


class DeviceDetailView(APIView):
    throttle_classes = [ReadThrottle]

    @extend_schema(operation_id="auth_devices_sign_out", responses={204: None, 401: PROBLEM, 404: PROBLEM},
                   summary="Sign a device out: its access and refresh tokens stop working at once")
    def delete(self, request, device_id: int):
        device = devices.devices_for_user(user=request.user).filter(id=device_id).first()
        if device is None:
            raise exceptions.NotFound("No signed-in device with this id.")
        devices.device_sign_out(device=device)
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


class PasswordIncorrect(exceptions.PermissionDenied):
    default_code = "password_incorrect"


class StaffAccountNotDeletable(exceptions.PermissionDenied):
    default_code = "staff_account"


class MeDeleteView(APIView):
    throttle_classes = [AuthThrottle]

    class InputSerializer(serializers.Serializer):
        password = TextField(style={"input_type": "password"}, help_text="The account's password, again")

        class Meta:
            ref_name = "AccountDelete"

    @extend_schema(operation_id="me_delete", request={"application/json": InputSerializer},
                   responses={204: None, 400: PROBLEM, 401: PROBLEM, 403: PROBLEM, 429: PROBLEM},
                   summary="Delete your account and everything Visage stores for it",
                   description="For the app's \"Delete account\" (App Store 5.1.1(v), Google Play, PIPL). Every "
                   "job is deleted with its photos, videos and results (unfinished ones are canceled, their held "
                   "credits released), then push devices, API tokens and signed-in devices; every token of the "
                   "account stops working at once. The billing ledger is kept, as bookkeeping law requires, "
                   "under a renamed, inactive user; credits left are not refunded. The password is checked "
                   "against the sign-in limits (429 `too_many_failed_logins`); a wrong one is 403 "
                   "`password_incorrect`. Staff accounts are closed in the admin (403 `staff_account`).")
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            confirmed = authenticate_limited(request, username=request.user.get_username(),
                                             password=serializer.validated_data["password"])
        except LoginLocked as exc:
            raise TooManyFailedLogins(wait=exc.retry_after_s, detail=exc.message) from None
        if confirmed is None or confirmed.pk != request.user.pk:
            raise PasswordIncorrect(_("The password is not this account's."))
        try:
            deletion.account_delete(user=request.user)
        except deletion.StaffAccount:
            raise StaffAccountNotDeletable(
                _("Staff accounts are closed by another administrator, in the admin.")
            ) from None
        return Response(status=status.HTTP_204_NO_CONTENT)
