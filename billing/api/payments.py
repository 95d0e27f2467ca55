"""Buying credits over the API: GET /api/v1/billing/packs, POST /api/v1/billing/checkout (Stripe,
Alipay or WeChat Pay), and the providers' callbacks (signature-checked, no user authentication):
POST /api/v1/billing/stripe/webhook, /billing/alipay/notify, /billing/wechatpay/notify."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import NoReverseMatch, reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing import notifications, payment_providers, payments
from billing.choices import PaymentProvider
from billing.models import CreditPack


class PackSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    credits = serializers.DecimalField(max_digits=12, decimal_places=2)
    price = serializers.DecimalField(max_digits=12, decimal_places=2)
    price_minor = serializers.IntegerField(
        help_text="The price in the currency's minor unit as the payment providers count it (cents; whole yen for JPY)."
    )
    currency = serializers.CharField()


class PackListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="CreditPacks")
    class OutputSerializer(serializers.Serializer):
        payments_enabled = serializers.BooleanField()
        providers = serializers.ListField(
            child=serializers.CharField(),
            help_text="Payment providers on this server (stripe, alipay, wechatpay).",
        )
        packs = PackSerializer(many=True)

    @extend_schema(
        operation_id="billing_packs",
        responses={200: OutputSerializer},
        tags=["billing"],
        summary="Credit packs for sale",
    )
    def get(self, request: Request) -> Response:
        providers = payment_providers.providers_enabled()
        data = {
            "payments_enabled": bool(providers),
            "providers": providers,
            "packs": list(payments.packs_active()),
        }
        return Response(self.OutputSerializer(data).data)


def _site_url(request: Request, name: str, fallback: str) -> str:
    try:
        path = reverse(name)
    except NoReverseMatch:
        path = fallback
    return request.build_absolute_uri(path)


class CheckoutCreateApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="CheckoutRequest")
    class InputSerializer(serializers.Serializer):
        pack_id = serializers.IntegerField()
        provider = serializers.ChoiceField(choices=PaymentProvider.choices, default=PaymentProvider.STRIPE)
        channel = serializers.ChoiceField(
            choices=["page", "app"],
            default="page",
            help_text="Alipay: page pay (a URL) or app pay (order_string).",
        )

    @extend_schema_serializer(component_name="Checkout")
    class OutputSerializer(serializers.Serializer):
        id = serializers.CharField(help_text="The purchase's reference (Stripe session id, or out_trade_no).")
        provider = serializers.CharField()
        url = serializers.CharField(
            help_text="Send the buyer here to pay (Stripe, Alipay page pay); else empty."
        )
        code_url = serializers.CharField(
            help_text="WeChat Pay Native: show as a QR code to scan; else empty."
        )
        order_string = serializers.CharField(help_text="Alipay app pay: pass to the Alipay SDK; else empty.")

    @extend_schema(
        operation_id="billing_checkout_create",
        request={"application/json": InputSerializer},
        responses={
            201: OutputSerializer,
            404: OpenApiResponse(description="No such pack for sale (application/problem+json)."),
            400: OpenApiResponse(description="Provider unknown, or not for the pack's currency."),
            502: OpenApiResponse(description="The provider failed or refused (payment_provider_error); nothing was charged."),
            503: OpenApiResponse(description="The provider is not configured (payments_not_configured)."),
        },
        tags=["billing"],
        summary="Start buying a credit pack (Stripe Checkout, Alipay, WeChat Pay)",
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        pack = get_object_or_404(CreditPack, pk=serializer.validated_data["pack_id"], active=True)
        started = payments.checkout_start(
            user=request.user,
            pack=pack,
            provider=serializer.validated_data["provider"],
            channel=serializer.validated_data["channel"],
            site_url=request.build_absolute_uri("/"),
            success_url=_site_url(request, "credits-success", "/account/credits/success/")
            + "?session_id={CHECKOUT_SESSION_ID}",
            cancel_url=_site_url(request, "credits-cancel", "/account/credits/canceled/"),
        )
        body = {
            "id": started.session.stripe_session_id,
            "provider": started.session.provider,
            "url": started.url,
            "code_url": started.code_url,
            "order_string": started.order_string,
        }
        return Response(body, status=status.HTTP_201_CREATED)


class AnswerWhateverIsAccepted(DefaultContentNegotiation):
    """A payment provider's notification is answered in the view's first format whatever its Accept
    header says: DRF answered 406 before the view ran (e.g. `Accept: text/plain` for an endpoint
    that answers the plain text `success`), so a paid order was never credited and the provider
    resent it until it gave up. Its body is still parsed by its Content-Type."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class StripeWebhookApi(APIView):
    """Stripe calls this; the Stripe-Signature header is the authentication."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []
    content_negotiation_class = AnswerWhateverIsAccepted

    @extend_schema(exclude=True)
    def post(self, request: Request) -> Response:
        outcome = payments.webhook_receive(
            payload=request.body, signature=request.headers.get("Stripe-Signature", "")
        )
        return Response({"received": True, "outcome": outcome})


class AlipayNotifyApi(APIView):
    """Alipay posts the asynchronous notification here (form-encoded); its RSA2 `sign` is the
    authentication. Alipay stops resending once the body is `success`."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []
    content_negotiation_class = AnswerWhateverIsAccepted

    @extend_schema(exclude=True)
    def post(self, request: Request) -> HttpResponse:
        notifications.alipay_notification_receive(form={k: request.POST.get(k) for k in request.POST})
        return HttpResponse("success", content_type="text/plain")


class WeChatPayNotifyApi(APIView):
    """WeChat Pay posts notifications here; the Wechatpay-Signature header is the authentication."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []
    content_negotiation_class = AnswerWhateverIsAccepted

    @extend_schema(exclude=True)
    def post(self, request: Request) -> Response:
        outcome = notifications.wechatpay_notification_receive(headers=request.headers, body=request.body)
        return Response({"code": "SUCCESS", "message": outcome})
