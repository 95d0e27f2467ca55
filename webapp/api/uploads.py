"""/api/v1/uploads: direct, resumable uploads straight to S3 (presigned multipart), for files too
large or connections too flaky for one multipart POST. The web process only signs URLs and asks S3
what it holds; the bytes go from the app to S3. Another user's upload is a 404."""

from __future__ import annotations

import re

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.jobs.services import direct_uploads
from webapp.media.choices import MediaKind

from .throttles import JobCreateThrottle, ReadThrottle

PROBLEM = OpenApiResponse(description="RFC 9457 application/problem+json with a stable `code`")


class UploadPart(serializers.Serializer):
    part_number = serializers.IntegerField(min_value=1)
    size_bytes = serializers.IntegerField()
    url = serializers.URLField(
        help_text="A presigned PUT: send the part's bytes as the body and nothing else"
    )

    class Meta:
        ref_name = "DirectUploadPart"


class UploadPartReceived(serializers.Serializer):
    part_number = serializers.IntegerField(min_value=1)
    size_bytes = serializers.IntegerField()
    etag = serializers.CharField()

    class Meta:
        ref_name = "DirectUploadPartReceived"


class UploadLinks(serializers.Serializer):
    self = serializers.URLField()
    complete = serializers.URLField()

    class Meta:
        ref_name = "DirectUploadLinks"


class UploadOutput(serializers.Serializer):
    id = serializers.UUIDField()
    state = serializers.CharField(
        help_text="pending, ready (complete and valid: a job may use it), used, rejected or expired"
    )
    kind = serializers.CharField()
    size_bytes = serializers.IntegerField()
    part_size_bytes = serializers.IntegerField()
    parts = serializers.ListField(
        child=UploadPart(),
        help_text="Every part: part_number, size_bytes, url (a presigned PUT; send the part's bytes as the "
        "body and nothing else). Fresh URLs on every GET. Empty once the upload is no longer pending.",
    )
    parts_received = serializers.ListField(
        child=UploadPartReceived(),
        help_text="The parts S3 already holds (part_number, size_bytes, etag): after a drop, send only the others.",
    )
    media = serializers.DictField(
        help_text="What validation found, once ready (media_type, width, height, frames, …)"
    )
    expires_at = serializers.DateTimeField(
        help_text="Unfinished or unused after this, it is deleted (never billed)"
    )
    urls = UploadLinks()

    class Meta:
        ref_name = "DirectUpload"


def upload_payload(upload, request, *, with_parts: bool = True) -> dict:
    pending = upload.state == "pending"
    return {
        "id": upload.id,
        "state": upload.state,
        "kind": upload.kind,
        "size_bytes": upload.size_bytes,
        "part_size_bytes": upload.part_size_bytes,
        "parts": [
            {"part_number": p.part_number, "size_bytes": p.size_bytes, "url": p.url}
            for p in direct_uploads.part_targets(upload)
        ]
        if pending and with_parts
        else [],
        "parts_received": [
            {"part_number": p.part_number, "size_bytes": p.size_bytes, "etag": p.etag}
            for p in direct_uploads.parts_received(upload)
        ]
        if pending and with_parts
        else [],
        "media": upload.media,
        "expires_at": upload.expires_at,
        "urls": {
            "self": request.build_absolute_uri(reverse("api-upload-detail", args=[upload.id])),
            "complete": request.build_absolute_uri(reverse("api-upload-complete", args=[upload.id])),
        },
    }


class UploadCreateView(APIView):
    throttle_classes = [JobCreateThrottle]

    class InputSerializer(serializers.Serializer):
        kind = serializers.ChoiceField(choices=MediaKind.choices, help_text="image (a photo) or video")
        size_bytes = serializers.IntegerField(min_value=1, help_text="The file's exact size")
        content_type = serializers.RegexField(
            # ASCII only: a non-ASCII type reached S3's signed headers (a 500, or a false 503).
            re.compile(r"^[\w.+-]+/[\w.+-]+$", re.ASCII), max_length=64,
            help_text="e.g. video/mp4 (the content is sniffed anyway)",
        )
        sha256 = serializers.RegexField(
            r"^[0-9a-fA-F]{64}$", help_text="The file's SHA-256 (hex): the stored object must match it"
        )

        class Meta:
            ref_name = "DirectUploadCreate"

    @extend_schema(
        operation_id="uploads_create",
        request=InputSerializer,
        responses={201: UploadOutput, 400: PROBLEM, 401: PROBLEM, 429: PROBLEM},
        summary="Start a direct, resumable upload",
        description="Answers presigned S3 part URLs: PUT each part straight to storage (retry a failed part as "
        "it is), then POST .../complete. After a drop, GET the upload: `parts_received` lists what S3 holds.",
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = direct_uploads.direct_upload_create(user=request.user, **serializer.validated_data)
        return Response(
            upload_payload(upload, request),
            status=status.HTTP_201_CREATED,
            headers={"Location": reverse("api-upload-detail", args=[upload.id])},
        )


class UploadDetailView(APIView):
    throttle_classes = [ReadThrottle]

    @extend_schema(
        operation_id="uploads_retrieve",
        responses={200: UploadOutput, 401: PROBLEM, 404: PROBLEM},
        summary="An upload, with the parts S3 already holds (to resume)",
    )
    def get(self, request, upload_id):
        upload = direct_uploads.direct_upload_get(user=request.user, upload_id=upload_id)
        return Response(upload_payload(upload, request))


class UploadCompleteView(APIView):
    throttle_classes = [JobCreateThrottle]

    @extend_schema(
        operation_id="uploads_complete",
        request=None,
        responses={
            200: UploadOutput,
            400: PROBLEM,
            401: PROBLEM,
            404: PROBLEM,
            409: PROBLEM,
            415: PROBLEM,
            422: PROBLEM,
        },
        summary="Finish an upload: S3 joins the parts, the server validates the stored file",
        description="409 upload_incomplete names the parts still missing; 422 checksum_mismatch when the stored "
        "file is not the declared one; otherwise the same refusals as a file posted to POST /api/v1/jobs. "
        "Once ready, create the job with target_upload (and source_upload) set to upload ids.",
    )
    def post(self, request, upload_id):
        upload = direct_uploads.direct_upload_get(user=request.user, upload_id=upload_id)
        upload = direct_uploads.direct_upload_complete(upload=upload)
        return Response(upload_payload(upload, request))
