"""What a refused submission must leave behind: nothing in the uploads bucket, no Job, no Upload."""

from __future__ import annotations

from django.conf import settings

from webapp.jobs.models import Job, Upload
from webapp.media import storage


def nothing_stored() -> bool:
    return (
        storage.list_keys(settings.S3_UPLOADS_BUCKET) == []
        and Job.objects.count() == Upload.objects.count() == 0
    )
