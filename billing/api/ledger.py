"""GET /api/v1/ledger (newest first, paginated) and GET /api/v1/ledger/export.csv — the caller's own."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import generics, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from billing import exports, selectors
from billing.choices import EntryKind


class LedgerListApi(generics.ListAPIView):
    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="LedgerEntry")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        kind = serializers.ChoiceField(choices=EntryKind.choices)
        amount = serializers.DecimalField(
            max_digits=20, decimal_places=4, help_text="Positive, except adjustments (signed)."
        )
        job_id = serializers.UUIDField(allow_null=True)
        reason = serializers.CharField()
        created_at = serializers.DateTimeField()

    serializer_class = OutputSerializer

    def get_queryset(self):
        return selectors.ledger_for_user(user=self.request.user)

    @extend_schema(
        operation_id="ledger_list",
        summary="The caller's ledger, newest first",
        responses={
            200: OutputSerializer(many=True),
            401: OpenApiResponse(description="Not authenticated (application/problem+json)."),
        },
        tags=["billing"],
    )
    def get(self, request: Request, *args: Any, **kwargs: Any):
        return super().get(request, *args, **kwargs)


class CsvRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        # Only errors (problem+json bodies) reach a renderer here; the view returns the CSV itself.
        return data if isinstance(data, str | bytes) else json.dumps(data, default=str)


class LedgerExportCsvApi(APIView):
    permission_classes = [IsAuthenticated]
    renderer_classes = [CsvRenderer]
    throttle_scope = "export"  # a dearer budget than reads, where the platform configures one

    @extend_schema(
        operation_id="ledger_export_csv",
        summary="The caller's whole ledger as CSV",
        responses={
            (200, "text/csv"): OpenApiResponse(response=OpenApiTypes.STR, description="CSV, newest first.")
        },
        tags=["billing"],
    )
    def get(self, request: Request) -> HttpResponse:
        body = exports.ledger_csv(selectors.ledger_for_user(user=request.user).iterator())
        response = HttpResponse(body, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="ledger.csv"'
        return response
