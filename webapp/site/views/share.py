"""/s/<token>/: a shared result's public page."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from webapp.jobs import sharing
from webapp.media import storage


@require_GET
def share_page(request: HttpRequest, token: str) -> HttpResponse:
    """/s/<token>/: public, unlisted. The result with its AI-generated label, nothing of the inputs or
    the owner. Unknown, expired, revoked, deleted or taken down: one plain 404 for all (no oracle)."""
    job = sharing.shared_job(token)
    if job is None:
        response = render(request, "webapp/share_missing.html", status=404)
    else:
        expiry_s = settings.SHARE_PRESIGN_EXPIRY_S
        extension = job.result_key.rsplit(".", 1)[-1]
        bucket = settings.S3_RESULTS_BUCKET
        response = render(
            request,
            "webapp/share.html",
            {
                "inline_url": storage.presigned_get(bucket, job.result_key, expiry_s=expiry_s),
                "download_url": storage.presigned_get(
                    bucket, job.result_key, expiry_s=expiry_s, download_name=f"visage-shared.{extension}"
                ),
                "is_video": job.result_media_type.startswith("video/"),
                "width": job.processed_width,
                "height": job.processed_height,
                "has_credentials": bool(job.provenance),
                "service_name": settings.SERVICE_NAME,
            },
        )
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Referrer-Policy"] = "no-referrer"  # the token must not leave in a Referer header
    response["Cache-Control"] = "no-store"
    return response
