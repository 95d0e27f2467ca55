"""What an owner does to a job: cancel it, delete it (or all of them), star it, run it again with other options."""

from __future__ import annotations

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import F
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from moderation import services as moderation_services
from webapp.media import storage

from .. import dispatch, events, sharing
from ..choices import JobState
from ..errors import JobNotCancelable, OriginalsDeleted
from ..models import DirectUpload, Job, Upload
from ..states import CANCELABLE_STATES, TERMINAL_STATES, current
from .intake import Consent, JobOptions, job_submit
from .lifecycle import job_end_without_charge
from .stored_files import job_result_delete, uploads_purge


def job_cancel(*, job: Job) -> Job:
    """Cancel a job that has not ended. Safe against a concurrent cancel or delete: only one caller
    moves the job; the others see where it ended up."""
    if job.state in TERMINAL_STATES:
        raise JobNotCancelable(_("The job is already %(state)s and cannot be canceled.") % {"state": job.state})
    moved = job_end_without_charge(
        job.id,
        from_states=CANCELABLE_STATES,
        to_state=JobState.CANCELED,
        code="canceled",
        message=gettext_noop("Canceled by the user."),
    )
    now = current(job.id)
    if moved:
        dispatch.cancel_queued(job.id, attempts=now[1] if now else job.attempts)
    if now is None or now[0] != JobState.CANCELED:
        if now is None:
            raise JobNotCancelable(_("The job is already deleted and cannot be canceled."))
        raise JobNotCancelable(_("The job is already %(state)s and cannot be canceled.") % {"state": now[0]})
    # One read of the job and its uploads: a concurrent delete may remove them any moment now.
    canceled = Job.objects.select_related("source", "target").filter(id=job.id).first()
    if canceled is None:
        raise JobNotCancelable(_("The job is already deleted and cannot be canceled."))
    return canceled


def job_delete(*, job: Job) -> None:
    """Cancel if still going, delete every stored object, then the rows (idempotent: a concurrent
    delete of the same job finds nothing left to do)."""
    if job.state not in TERMINAL_STATES:
        try:
            job_cancel(job=job)
        except JobNotCancelable:
            pass  # it ended (or was deleted) meanwhile; delete it all the same
    job = Job.objects.select_related("source", "target").filter(id=job.id).first()
    if job is None:
        return
    sharing.share_links_revoke(job=job)  # its public page stops at once (the rows go with the job)
    if job.result_key:
        job_result_delete(job)
    uploads_purge(job)
    upload_ids = [job.source_id, job.target_id, *job.extra_sources.values_list("id", flat=True)]
    events.job_deleted(job_id=job.id, owner_id=job.owner_id, state=job.state, version=job.version)
    moderation_services.subject_forget(subject_id=job.id)  # the hashes of its allowed photos
    job.delete()
    Upload.objects.filter(id__in=upload_ids).delete()


def jobs_delete_all(*, user) -> int:
    """Every job of `user`, each as job_delete does it (unfinished ones canceled first, their holds
    released), and their resumable uploads not used by a job (the row's delete discards the stored
    file: jobs/signals.py): an account being deleted. Returns how many jobs were deleted."""
    jobs = list(Job.objects.filter(owner=user).select_related("source", "target"))
    for job in jobs:
        job_delete(job=job)
    for upload in DirectUpload.objects.filter(owner=user):
        upload.delete()
    return len(jobs)


def job_set_favourite(*, job: Job, favourite: bool) -> Job:
    """Star or unstar a job in its owner's gallery."""
    moved = (
        Job.objects.filter(id=job.id)
        .exclude(favourite=favourite)
        .update(favourite=favourite, version=F("version") + 1)
    )
    if moved:
        events.job_changed(job.id)
    job.refresh_from_db()
    return job


def originals_available(job: Job) -> bool:
    """Whether the job's uploaded originals are still stored: only until the job ends (they are
    deleted then, by design), so a job can be run again only while it is still going."""
    uploads = (job.source, job.target, *job.extra_sources.all())
    return job.media_deleted_at is None and all(upload.deleted_at is None for upload in uploads)


ORIGINALS_DELETED_MESSAGE = gettext_noop(
    "The original photos were deleted when this swap ended (Visage keeps uploads only while a swap is "
    "in progress), so it can't be run again. Start a new swap with the files to try other options."
)


def job_run_again(*, user, job: Job, options: JobOptions, consent: Consent | None) -> tuple[Job, bool]:
    """Submit the same uploaded originals again with other options, through job_submit like any new
    job (consent, checks, quote, hold, moderation). Raises OriginalsDeleted once they are gone."""
    if not originals_available(job):
        raise OriginalsDeleted(_(ORIGINALS_DELETED_MESSAGE))
    sources = [job.source, *job.extra_sources.order_by("created_at")]
    try:
        files = [_stored_original(upload) for upload in (*sources, job.target)]
    except storage.ObjectMissing:  # the job ended while we read them
        raise OriginalsDeleted(_(ORIGINALS_DELETED_MESSAGE)) from None
    *source_files, target_file = files
    return job_submit(user=user, sources=source_files, target=target_file, options=options, consent=consent)


def _stored_original(upload: Upload) -> SimpleUploadedFile:
    data = storage.get_bytes(settings.S3_UPLOADS_BUCKET, upload.s3_key)
    return SimpleUploadedFile(upload.original_name or upload.role, data, content_type=upload.media_type)
