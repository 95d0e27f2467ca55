"""The job state machine after intake: screening, review, the GPU queue, running, and every end.

Success captures the charge in the transaction that records the result; every other end releases the
hold and deletes the uploads (job_end_without_charge).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from billing import services as billing_services
from swap.modes import mode_ran
from webapp.telemetry import metrics

from .. import dispatch, events, observe
from ..choices import JobState
from ..models import Job
from ..states import BEFORE_RUNNING, transition
from .push_outbox import pushes_owe
from .stored_files import job_result_delete, result_discard, uploads_purge
from .webhook_outbox import webhook_owe

# --- ending a job ------------------------------------------------------------------------------------


def job_end_without_charge(
    job_id: uuid.UUID, *, from_states: Iterable[str], to_state: str, code: str, message: str
) -> bool:
    """Any exit but success: move the job, release its hold, delete its uploads."""
    with transaction.atomic():
        moved = transition(
            job_id,
            from_states=from_states,
            to_state=to_state,
            error_code=code,
            error_message=message,
            completed_at=timezone.now(),
        )
        if moved:
            billing_services.hold_release(job_id=job_id, reason=f"job {to_state}: {code}")
            webhook_owe(job_id, state=to_state)
            pushes_owe(job_id, state=to_state)
    if moved:
        observe.job_ended(job_id)
        job = Job.objects.select_related("source", "target").get(id=job_id)
        if job.result_key:
            job_result_delete(job)
        uploads_purge(job)
    return moved


def job_fail(job_id: uuid.UUID, *, code: str, message: str, from_states: Iterable[str] | None = None) -> bool:
    states = from_states or [*BEFORE_RUNNING, JobState.RUNNING]
    return job_end_without_charge(
        job_id, from_states=states, to_state=JobState.FAILED, code=code, message=message
    )


# --- screening and review ----------------------------------------------------------------------------


def job_screen_start(job_id: uuid.UUID) -> str:
    """"first" when the job moved from `created` to `screening` now; "again" when it was already
    screening: RQ retries a screening that hit a transient fault, the sweeper re-screens one whose
    worker died (the verdict is applied by guarded transitions, so a duplicate screening cannot move
    the job twice), and what the earlier try stored may be there; "" when it is not waiting for
    screening."""
    if transition(job_id, from_states=[JobState.CREATED], to_state=JobState.SCREENING):
        return "first"
    return "again" if Job.objects.filter(id=job_id, state=JobState.SCREENING).exists() else ""


def job_enqueue_gpu(job_id: uuid.UUID, *, from_states: Iterable[str]) -> bool:
    """Content passed moderation (or a dead worker's job is retried): queue the GPU run on the
    queue the owner's plan allows."""
    with transaction.atomic():
        moved = transition(
            job_id, from_states=from_states, to_state=JobState.QUEUED, queued_at=timezone.now()
        )
        if moved:
            queue_name, attempts = Job.objects.values_list("queue", "attempts").get(id=job_id)
            transaction.on_commit(
                lambda: dispatch.enqueue_gpu(job_id, queue_name, attempt=attempts + 1), robust=True
            )
    return moved


def job_hold_for_review(job_id: uuid.UUID, *, from_states: Iterable[str], message: str) -> bool:
    return transition(job_id, from_states=from_states, to_state=JobState.REVIEW, error_message=message)


def job_reject(
    job_id: uuid.UUID, *, from_states: Iterable[str], message: str, code: str = "content_rejected"
) -> bool:
    return job_end_without_charge(
        job_id, from_states=from_states, to_state=JobState.REJECTED, code=code, message=message
    )


def job_review_approve(job_id: uuid.UUID) -> bool:
    """A moderator approved a job waiting in review: inputs go to the GPU; a held result is published."""
    job = Job.objects.filter(id=job_id).first()
    if job is None:  # deleted while the moderator looked (its owner deleted it, or the account)
        return False
    if job.result_key:
        return _succeed_after_review(job)
    return job_enqueue_gpu(job_id, from_states=[JobState.REVIEW])


def job_review_reject(job_id: uuid.UUID, *, message: str) -> bool:
    return job_reject(job_id, from_states=[JobState.REVIEW], message=message)


# --- running -------------------------------------------------------------------------------------


def job_start(job_id: uuid.UUID) -> bool:
    now = timezone.now()
    return transition(
        job_id,
        from_states=[JobState.QUEUED],
        to_state=JobState.RUNNING,
        started_at=now,
        heartbeat_at=now,
        attempts=F("attempts") + 1,
        progress=5,
    )


def job_progress(job_id: uuid.UUID, progress: int) -> None:
    progress = max(0, min(99, progress))
    moved = (
        Job.objects.filter(id=job_id, state=JobState.RUNNING)
        .exclude(progress=progress)
        .update(progress=progress, heartbeat_at=timezone.now(), version=F("version") + 1)
    )
    if moved:
        events.job_changed(job_id)
    else:  # the same figure again: only the heartbeat, no new version or event
        job_heartbeat(job_id)


def job_heartbeat(job_id: uuid.UUID) -> None:
    Job.objects.filter(id=job_id, state=JobState.RUNNING).update(heartbeat_at=timezone.now())


# What a job that never got past a dependency's outage says, by the service that was down.
UNAVAILABLE_MESSAGES = {
    "inference": "The inference server was unavailable, so this swap could not be completed after {attempts} "
    "attempts. Nothing was charged; please try again later.",
    "storage": "The storage service was unavailable, so this swap could not be completed after {attempts} "
    "attempts. Nothing was charged; please try again later.",
}


def job_requeue_after_transient_fault(job_id: uuid.UUID, *, service: str) -> bool:
    """A dependency (`service`: "inference" or "storage") failed this run. True: the job is back in
    `queued` for RQ's retry (with backoff) of the same task, the caller re-raises. False: the row's
    attempts are spent (VISAGE_JOB_MAX_ATTEMPTS), and the job failed naming the service.

    The row is the one retry authority: RQ's retries and the sweeper only ever run the next attempt
    of a `queued` job, and job_start counts it, so no chain of retries can run a job more often.
    """
    moved = Job.objects.filter(
        id=job_id, state=JobState.RUNNING, attempts__lt=settings.JOB_MAX_ATTEMPTS
    ).update(state=JobState.QUEUED, progress=0, queued_at=timezone.now(), version=F("version") + 1)
    if moved:
        events.job_changed(job_id)
        return True
    attempts = Job.objects.filter(id=job_id).values_list("attempts", flat=True).first() or 0
    job_fail(
        job_id,
        code=f"{service}_unavailable",
        message=UNAVAILABLE_MESSAGES[service].format(attempts=attempts),
        from_states=[JobState.RUNNING],
    )
    return False


@dataclass(frozen=True)
class JobOutcome:
    """What a finished GPU run produced: the stored result and the figures billing charges for."""

    result_key: str
    result_media_type: str
    result_bytes: int
    frames: int
    width: int
    height: int
    gpu_seconds: float
    wall_seconds: float
    stage_ms: dict
    engine_notes: dict
    needs_review: bool = False
    review_message: str = ""
    provenance: dict = field(default_factory=dict)  # what the signed result's C2PA manifest says


def job_succeed(job_id: uuid.UUID, outcome: JobOutcome) -> bool:
    """Record the result and capture the charge in one transaction; or hold the result for review.

    False when the job is no longer running (canceled meanwhile): the stored result is deleted.
    """
    metrics.observe_engine_stages(outcome.stage_ms)
    moved = _record_outcome(job_id, outcome)
    if not moved:
        result_discard(result_key=outcome.result_key)
    return moved


def _record_outcome(job_id: uuid.UUID, outcome: JobOutcome) -> bool:
    fields = dict(
        result_key=outcome.result_key,
        result_media_type=outcome.result_media_type,
        result_bytes=outcome.result_bytes,
        frames_processed=outcome.frames,
        processed_width=outcome.width,
        processed_height=outcome.height,
        gpu_seconds=Decimal(str(round(outcome.gpu_seconds, 4))),
        wall_seconds=Decimal(str(round(outcome.wall_seconds, 4))),
        stage_ms=outcome.stage_ms,
        engine_notes=outcome.engine_notes,
        provenance=outcome.provenance,
    )
    if outcome.needs_review:
        moved = transition(
            job_id,
            from_states=[JobState.RUNNING],
            to_state=JobState.REVIEW,
            progress=100,
            error_message=outcome.review_message,
            **fields,
        )
        if moved:
            uploads_purge(Job.objects.select_related("source", "target").get(id=job_id))
        return moved
    with transaction.atomic():
        moved = transition(
            job_id,
            from_states=[JobState.RUNNING],
            to_state=JobState.SUCCEEDED,
            progress=100,
            result_visible=True,
            completed_at=timezone.now(),
            **fields,
        )
        if moved:
            _capture(Job.objects.select_related("target").get(id=job_id))
            webhook_owe(job_id, state=JobState.SUCCEEDED)
            pushes_owe(job_id, state=JobState.SUCCEEDED)
    if moved:
        observe.job_ended(job_id)
        uploads_purge(Job.objects.select_related("source", "target").get(id=job_id))
    return moved


def job_mode_ran(job: Job) -> str:
    """The mode whose work ran for this job, which billing charges (swap.modes.mode_ran): the
    engine's report in engine_notes ("mode_ran"; "mode" in older notes), else what the job was
    quoted as (the mode it runs as on this install)."""
    notes = job.engine_notes or {}
    return mode_ran(
        (job.quote or {}).get("mode") or job.mode,
        reported=(notes.get("mode_ran"), notes.get("mode")),
        enhanced=bool(notes["enhancer"]) if "enhancer" in notes else None,
    )


def _capture(job: Job) -> None:
    charge = billing_services.hold_capture(
        job_id=job.id,
        usage=billing_services.Usage(
            frames=job.frames_processed or 1,
            width=job.processed_width or 0,
            height=job.processed_height or 0,
            mode=job_mode_ran(job),
            mode_requested=job.mode,
            kind=job.target.kind,
            resolution=job.resolution,
            gpu_seconds=job.gpu_seconds or Decimal("0"),
            wall_seconds=job.wall_seconds or Decimal("0"),
            stage_seconds={k: v / 1000 for k, v in job.stage_ms.items()},
        ),
    )
    Job.objects.filter(id=job.id).update(cost=charge.amount)
    transaction.on_commit(lambda: observe.credits_captured(charge))


def _succeed_after_review(job: Job) -> bool:
    with transaction.atomic():
        moved = transition(
            job.id,
            from_states=[JobState.REVIEW],
            to_state=JobState.SUCCEEDED,
            result_visible=True,
            error_message="",
            completed_at=timezone.now(),
        )
        if moved:
            _capture(job)
            webhook_owe(job.id, state=JobState.SUCCEEDED)
            pushes_owe(job.id, state=JobState.SUCCEEDED)
    if moved:
        observe.job_ended(job.id)
    return moved
