"""Buying credits over the API: GET /api/v1/billing/packs, POST /api/v1/billing/checkout, and the
Stripe webhook POST /api/v1/billing/stripe/webhook (signature-checked, no user authentication)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import NoReverseMatch, reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing import payments, stripe_gateway
from billing.models import CreditPack


class PackSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    credits = serializers.DecimalField(max_digits=12, decimal_places=2)
    price = serializers.DecimalField(max_digits=12, decimal_places=2)
    price_minor = serializers.IntegerField(help_text="The price in the currency's minor unit (cents).")
    currency = serializers.CharField()


class PackListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="CreditPacks")
    class OutputSerializer(serializers.Serializer):
        payments_enabled = serializers.BooleanField()
        packs = PackSerializer(many=True)

    @extend_schema(
        operation_id="billing_packs",
        responses={200: OutputSerializer},
        tags=["billing"],
        summary="Credit packs for sale",
    )
    def get(self, request: Request) -> Response:
        data = {"payments_enabled": stripe_gateway.configured(), "packs": list(payments.packs_active())}
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

    @extend_schema_serializer(component_name="Checkout")
    class OutputSerializer(serializers.Serializer):
        id = serializers.CharField(help_text="The Stripe Checkout Session id.")
        url = serializers.URLField(help_text="Send the buyer here to pay.")

    @extend_schema(
        operation_id="billing_checkout_create",
        request={"application/json": InputSerializer},
        responses={
            201: OutputSerializer,
            404: OpenApiResponse(description="No such pack for sale (application/problem+json)."),
            502: OpenApiResponse(description="Stripe failed or refused (payment_provider_error); nothing was charged."),
            503: OpenApiResponse(description="Card payments are not configured (payments_not_configured)."),
        },
        tags=["billing"],
        summary="Start buying a credit pack (Stripe Checkout)",
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        pack = get_object_or_404(CreditPack, pk=serializer.validated_data["pack_id"], active=True)
        session, url = payments.checkout_start(
            user=request.user,
            pack=pack,
            success_url=_site_url(request, "credits-success", "/account/credits/success/")
            + "?session_id={CHECKOUT_SESSION_ID}",
            cancel_url=_site_url(request, "credits-cancel", "/account/credits/canceled/"),
        )
        return Response({"id": session.stripe_session_id, "url": url}, status=status.HTTP_201_CREATED)


class StripeWebhookApi(APIView):
    """Stripe calls this; the Stripe-Signature header is the authentication."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []

    @extend_schema(exclude=True)
    def post(self, request: Request) -> Response:
        outcome = payments.webhook_receive(
            payload=request.body, signature=request.headers.get("Stripe-Signature", "")
        )
        return Response({"received": True, "outcome": outcome})
