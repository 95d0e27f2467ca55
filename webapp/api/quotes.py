"""POST /api/v1/quotes — price a job before submitting it.

Send the target's size as JSON (`width`, `height`, `frames`, optional `kind`), or the target file
itself (multipart `target`): the server then measures it exactly as a job submission does (probed
frame count for a video) and echoes what it measured, so a later JSON quote with those numbers, the
quote of the submitted job and this one are the same to the cent (webapp.jobs.services.intake.job_quote).
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing import selectors as billing_selectors
from billing.choices import MediaKind, Mode, Resolution
from billing.errors import top_up_path
from webapp.api.parsers import BoundedJSONParser
from webapp.jobs.services import intake
from webapp.media.validation import MediaInfo, inspect_upload

MAX_SIDE_PX = 16_384
MAX_FRAMES = 1_000_000
# Exact values as computed (money already in the currency's minor unit), e.g. "6.75".
_MONEY = {"max_digits": None, "decimal_places": None, "coerce_to_string": True}


@extend_schema_serializer(component_name="QuoteTarget")
class QuoteTargetSerializer(serializers.Serializer):
    width = serializers.IntegerField()
    height = serializers.IntegerField()
    frames = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=MediaKind.choices)


@extend_schema_serializer(component_name="QuoteLinks")
class QuoteLinksSerializer(serializers.Serializer):
    top_up = serializers.URLField(help_text="Where to buy credits.")


class QuoteCreateView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [BoundedJSONParser, MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="QuoteRequest")
    class InputSerializer(serializers.Serializer):
        target = serializers.FileField(
            required=False, help_text="The target photo or video itself (multipart); or send its size."
        )
        width = serializers.IntegerField(
            min_value=1, max_value=MAX_SIDE_PX, required=False, help_text="Target width in pixels."
        )
        height = serializers.IntegerField(
            min_value=1, max_value=MAX_SIDE_PX, required=False, help_text="Target height in pixels."
        )
        frames = serializers.IntegerField(
            min_value=1, max_value=MAX_FRAMES, default=1, help_text="1 for a photo; a video's frame count."
        )
        kind = serializers.ChoiceField(
            choices=MediaKind.choices, required=False, help_text="Default: video when frames > 1."
        )
        mode = serializers.ChoiceField(choices=Mode.choices)
        resolution = serializers.ChoiceField(choices=Resolution.choices)

        def validate(self, attrs):
            # In a form body an empty `frames=` would silently mean the default (1 frame): a video's
            # price must never be quoted from a field the client left blank.
            if self.initial_data.get("frames", None) == "":
                raise serializers.ValidationError({"frames": ["A whole number of frames, or leave the field out."]})
            if attrs.get("target") is None and (attrs.get("width") is None or attrs.get("height") is None):
                raise serializers.ValidationError(
                    {"width": ["Send width and height (or the target file itself)."]}
                )
            return attrs

    @extend_schema_serializer(component_name="Quote")
    class OutputSerializer(serializers.Serializer):
        frames = serializers.IntegerField()
        kind = serializers.CharField()
        processed_width = serializers.IntegerField()
        processed_height = serializers.IntegerField()
        mode = serializers.ChoiceField(choices=Mode.choices, help_text="The mode that runs (and is priced).")
        mode_requested = serializers.ChoiceField(choices=Mode.choices)
        resolution = serializers.ChoiceField(choices=Resolution.choices)
        resolution_coefficient = serializers.DecimalField(**_MONEY)
        mode_weight = serializers.DecimalField(**_MONEY)
        gpu_seconds_per_frame_estimate = serializers.DecimalField(max_digits=20, decimal_places=6)
        gpu_seconds_estimate = serializers.DecimalField(max_digits=20, decimal_places=3)
        unit_price = serializers.DecimalField(max_digits=20, decimal_places=6)
        minimum_charge = serializers.DecimalField(**_MONEY)
        amount = serializers.DecimalField(**_MONEY, help_text="The price: the most this job will cost.")
        amount_minor = serializers.IntegerField(help_text="The price in the currency's minor unit.")
        hold_amount = serializers.DecimalField(
            **_MONEY, help_text="Set aside at submit: equal to the price (kept for older clients)."
        )
        currency = serializers.CharField()
        queue = serializers.CharField(help_text="The GPU queue the job will run on.")
        available = serializers.DecimalField(**_MONEY, help_text="The caller's available credit now.")
        sufficient = serializers.BooleanField(help_text="Whether the available credit covers the price.")
        target = QuoteTargetSerializer(help_text="The size and frame count the price is for.")
        links = QuoteLinksSerializer()

    @extend_schema(
        operation_id="quotes_create",
        request={"application/json": InputSerializer, "multipart/form-data": InputSerializer},
        responses={
            200: OutputSerializer,
            400: OpenApiResponse(
                description="Invalid values or file (application/problem+json, code validation_error)."
            ),
            401: OpenApiResponse(description="Not authenticated (application/problem+json)."),
        },
        summary="Price a job",
        description="The price of a job on the caller's plan: the most it will cost (never more).",
        tags=["billing"],
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if data.get("target") is not None:
            target = inspect_upload(data["target"], field="target", allow_video=settings.VIDEO_ENABLED)
        else:
            frames = data["frames"]
            target = MediaInfo(
                data=b"",
                sha256="",
                media_type="",
                kind=data.get("kind") or (MediaKind.VIDEO if frames > 1 else MediaKind.IMAGE),
                width=data["width"],
                height=data["height"],
                frames=frames,
            )
        quote = intake.job_quote(
            user=request.user, target=target, mode=data["mode"], resolution=data["resolution"]
        )
        available = billing_selectors.account_balance(user=request.user).available
        body = {
            **quote.as_dict(),
            "amount_minor": quote.amount_minor,
            "available": available,
            "sufficient": available >= quote.hold_amount,
            "target": {
                "width": target.width,
                "height": target.height,
                "frames": target.frames,
                "kind": target.kind,
            },
            "links": {"top_up": request.build_absolute_uri(top_up_path())},
        }
        return Response(self.OutputSerializer(body).data)
