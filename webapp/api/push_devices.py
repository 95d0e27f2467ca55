"""/api/v1/devices: the signed-in user's push devices (an app install's FCM or APNs token), where a
job's end is announced. Not /api/v1/auth/devices, the devices signed in with access and refresh
tokens: signing a device out does not remove its push token; the app deletes it here."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import RegexValidator
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.notifications import push_devices
from webapp.notifications.models import PushDevice, PushPlatform
from webapp.notifications.push import enabled_platforms

from .fields import TextField
from .throttles import ReadThrottle

PROBLEM = OpenApiResponse(description="RFC 9457 application/problem+json with a stable `code`")
# A device token is bytes (32 today; Apple says not to count on it) sent as hex: whole bytes only.
APNS_TOKEN = RegexValidator(r"^(?:[0-9a-fA-F]{2})+$", "An APNs device token is hexadecimal bytes (an even number of digits).")
FCM_TOKEN = RegexValidator(r"^[A-Za-z0-9_:\-]+$", "An FCM registration token has letters, digits, '_', ':' and '-'.")


class PushDeviceOutput(serializers.Serializer):
    id = serializers.IntegerField()
    platform = serializers.ChoiceField(choices=PushPlatform.choices)
    app_id = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    locale = serializers.CharField(allow_blank=True)
    push_enabled = serializers.BooleanField(
        help_text="Whether this server is configured to push to the device's platform now"
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField(help_text="Its latest registration")

    class Meta:
        ref_name = "PushDevice"


def push_device_payload(device: PushDevice, enabled: set[str]) -> dict:
    return {
        "id": device.id,
        "platform": device.platform,
        "app_id": device.app_id,
        "name": device.name,
        "locale": device.locale,
        "push_enabled": device.platform in enabled,
        "created_at": device.created_at,
        "updated_at": device.updated_at,
    }


class PushDeviceListView(APIView):
    throttle_classes = [ReadThrottle]

    class InputSerializer(serializers.Serializer):
        platform = serializers.ChoiceField(
            choices=PushPlatform.choices, help_text="fcm: a Firebase registration token; apns: an APNs device token"
        )
        token = TextField(
            max_length=1024, help_text="The push token the platform gave the app (APNs: the device token in hex)"
        )
        app_id = TextField(
            max_length=255,
            validators=[RegexValidator(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", "An app id is a bundle id or package name.")],
            help_text="The iOS bundle id (APNs topic) or the Android package name",
        )
        name = TextField(
            max_length=100, required=False, allow_blank=True, default="",
            help_text="As the app names the device (\"Ana's iPhone\")",
        )
        locale = TextField(
            max_length=35, required=False, allow_blank=True, default="",
            validators=[RegexValidator(r"^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8})*$", "A locale is BCP 47, e.g. pt-BR.")],
            help_text="BCP 47 language of the device's pushes (e.g. de, pt-BR); empty: the site's",
        )

        class Meta:
            ref_name = "PushDeviceRegister"

        def validate(self, attrs):
            validator = APNS_TOKEN if attrs["platform"] == PushPlatform.APNS else FCM_TOKEN
            try:
                validator(attrs["token"])
            except DjangoValidationError as exc:
                raise serializers.ValidationError({"token": exc.messages}) from None
            if attrs["platform"] == PushPlatform.APNS:
                attrs["token"] = attrs["token"].lower()
            return attrs

    @extend_schema(operation_id="push_devices_list", responses={200: PushDeviceOutput(many=True), 401: PROBLEM},
                   summary="Your push devices (app installs that get a push when a job ends)")
    def get(self, request):
        enabled = enabled_platforms()
        devices = push_devices.push_devices_for_user(user=request.user)
        return Response([push_device_payload(device, enabled) for device in devices])

    @extend_schema(
        operation_id="push_devices_register",
        request=InputSerializer,
        responses={201: PushDeviceOutput, 200: PushDeviceOutput, 400: PROBLEM, 401: PROBLEM, 429: PROBLEM},
        summary="Register this app install's push token",
        description="When one of your jobs ends (succeeded, failed, rejected, canceled) each of your push devices "
        "gets one notification: a short title and body in the device's locale, and the data `job_id` and `state`. "
        "Registering a token again updates it (200, same id): call this on every app start and whenever the "
        "platform rotates the token. A token the platform reports as invalid is removed by the server.",
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            device, created = push_devices.push_device_register(user=request.user, **serializer.validated_data)
        except push_devices.AppNotServed as exc:
            raise exceptions.ValidationError({"app_id": [str(exc)]}) from None
        body = push_device_payload(device, enabled_platforms())
        if not created:
            return Response(body)
        location = reverse("api-push-device-detail", args=[device.id])
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": location})


class PushDeviceDetailView(APIView):
    throttle_classes = [ReadThrottle]

    @extend_schema(operation_id="push_devices_delete", responses={204: None, 401: PROBLEM, 404: PROBLEM},
                   summary="Remove a push device: no more pushes to it")
    def delete(self, request, device_id: int):
        device = push_devices.push_devices_for_user(user=request.user).filter(id=device_id).first()
        if device is None:
            raise exceptions.NotFound("No push device with this id.")
        push_devices.push_device_remove(device=device)
        return Response(status=status.HTTP_204_NO_CONTENT)
