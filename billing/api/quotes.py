"""POST /api/v1/quotes — price a job before submitting it."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing import selectors, services
from billing.choices import Mode, Resolution

MAX_SIDE_PX = 16_384
MAX_FRAMES = 1_000_000
# Exact values as computed (money already in the currency's minor unit), e.g. "6.75".
_MONEY = {"max_digits": None, "decimal_places": None, "coerce_to_string": True}


class QuoteCreateApi(APIView):
    permission_classes = [IsAuthenticated]
    # JSON only: in a form body an empty `frames=` reads as "absent" and became 1 frame (issue 15).
    parser_classes = [JSONParser]

    @extend_schema_serializer(component_name="QuoteRequest")
    class InputSerializer(serializers.Serializer):
        width = serializers.IntegerField(
            min_value=1, max_value=MAX_SIDE_PX, help_text="Source width in pixels."
        )
        height = serializers.IntegerField(
            min_value=1, max_value=MAX_SIDE_PX, help_text="Source height in pixels."
        )
        frames = serializers.IntegerField(
            min_value=1, max_value=MAX_FRAMES, default=1, help_text="1 for an image."
        )
        mode = serializers.ChoiceField(choices=Mode.choices)
        resolution = serializers.ChoiceField(choices=Resolution.choices)

    @extend_schema_serializer(component_name="Quote")
    class OutputSerializer(serializers.Serializer):
        frames = serializers.IntegerField()
        processed_width = serializers.IntegerField()
        processed_height = serializers.IntegerField()
        mode = serializers.ChoiceField(choices=Mode.choices)
        resolution = serializers.ChoiceField(choices=Resolution.choices)
        resolution_coefficient = serializers.DecimalField(**_MONEY)
        mode_weight = serializers.DecimalField(**_MONEY)
        gpu_seconds_per_frame_estimate = serializers.DecimalField(max_digits=20, decimal_places=6)
        gpu_seconds_estimate = serializers.DecimalField(max_digits=20, decimal_places=3)
        unit_price = serializers.DecimalField(max_digits=20, decimal_places=6)
        minimum_charge = serializers.DecimalField(**_MONEY)
        amount = serializers.DecimalField(**_MONEY, help_text="The estimated charge.")
        hold_amount = serializers.DecimalField(
            **_MONEY, help_text="Reserved at submit; the unused part is released."
        )
        currency = serializers.CharField()
        queue = serializers.CharField(help_text="The GPU queue the job will run on.")
        available = serializers.DecimalField(**_MONEY, help_text="The caller's available credit now.")
        sufficient = serializers.BooleanField(help_text="Whether the available credit covers the hold.")

    @extend_schema(
        operation_id="quotes_create",
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            400: OpenApiResponse(
                description="Invalid values (application/problem+json, code validation_error)."
            ),
            401: OpenApiResponse(description="Not authenticated (application/problem+json)."),
        },
        summary="Price a job",
        description="Estimate the charge for a job from the caller's price plan and the calibrated GPU time.",
        tags=["billing"],
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        quote = services.quote_job(user=request.user, **serializer.validated_data)
        available = selectors.account_balance(user=request.user).available
        data = {
            **{name: getattr(quote, name) for name in self.OutputSerializer().fields if hasattr(quote, name)},
            "available": available,
            "sufficient": available >= quote.hold_amount,
        }
        return Response(self.OutputSerializer(data).data)
