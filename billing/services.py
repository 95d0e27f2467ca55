"""Billing writes: accounts, top-ups, quotes, and the hold → capture/release → refund life of a job.

Every function is keyword-only and atomic. Money moves only by appending LedgerEntry rows; the
balance is always derived from them (selectors.account_balance_for).
"""

from __future__ import annotations

import uuid
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

from django.db import IntegrityError, transaction

from billing import selectors
from billing.calibration import DEFAULT_GPU_SECONDS_PER_FRAME, EMA_ALPHA, GPU_SECONDS_PER_FRAME_PLACES
from billing.choices import EntryKind, MediaKind, Mode, Resolution, SampleOrigin
from billing.errors import AlreadyRefunded, HoldClosed, InsufficientCredit, NoHold, NotRefundable, PlanChanged
from billing.models import Account, Charge, GpuCalibration, GpuSample, LedgerEntry, ModeRun
from billing.pricing import PlanPricing, charge_amount, pixel_class, processed_size
from billing.values import Balance, Quote, Usage

__all__ = [
    "Balance",
    "Quote",
    "Usage",
    "account_adjust",
    "account_get_or_create",
    "account_top_up",
    "calibration_record",
    "gpu_sample_record",
    "hold_capture",
    "hold_place",
    "hold_release",
    "job_refund",
    "mode_runs_record",
    "quote_job",
]

GPU_SECONDS_PLACES = Decimal("0.001")


def _require_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValueError("a reason is required")
    return reason


def _require_decimal(name: str, amount: Decimal) -> None:
    if not isinstance(amount, Decimal) or not amount.is_finite():
        raise TypeError(f"{name} must be a finite Decimal")


def account_get_or_create(*, user) -> Account:
    account, _ = Account.objects.get_or_create(user=user)
    return account


def _locked_account(*, user) -> Account:
    """The user's account row, locked until the transaction ends (serialises all money moves)."""
    account = account_get_or_create(user=user)
    return Account.objects.select_for_update(of=("self",)).select_related("plan").get(pk=account.pk)


def _locked_account_by_pk(pk: int) -> Account:
    return Account.objects.select_for_update(of=("self",)).select_related("plan").get(pk=pk)


@transaction.atomic
def account_top_up(*, user, amount: Decimal, actor, reason: str) -> LedgerEntry:
    _require_decimal("amount", amount)
    if amount <= 0:
        raise ValueError("a top-up must be positive")
    reason = _require_reason(reason)
    account = _locked_account(user=user)
    _require_whole_units(amount, account)
    return LedgerEntry.objects.create(
        account=account, kind=EntryKind.TOP_UP, amount=amount, actor=actor, reason=reason
    )


def _require_whole_units(amount: Decimal, account: Account) -> None:
    """Credits by hand in whole units of the account's currency (cents for USD, yen for JPY): a finer
    amount is money nobody can spend or be shown."""
    plan = account.plan or selectors.default_plan()
    if amount != selectors.quantize_for_plan(amount, plan):
        unit = Decimal(1).scaleb(-plan.minor_unit_exponent)
        raise ValueError(f"{amount} is finer than the account's currency allows (whole {unit} {plan.currency})")


@transaction.atomic
def account_adjust(*, user, amount: Decimal, actor, reason: str) -> LedgerEntry:
    """A signed manual correction. A debit may not take available credit below zero."""
    _require_decimal("amount", amount)
    if amount == 0:
        raise ValueError("an adjustment must not be zero")
    reason = _require_reason(reason)
    account = _locked_account(user=user)
    _require_whole_units(amount, account)
    if amount < 0:
        available = selectors.account_balance_for(account=account).available
        if available + amount < 0:
            raise ValueError(
                f"this debit would leave {available + amount} available; at most {available} can be taken"
            )
    return LedgerEntry.objects.create(
        account=account, kind=EntryKind.ADJUSTMENT, amount=amount, actor=actor, reason=reason
    )


def _quote(
    *,
    pricing: PlanPricing,
    width: int,
    height: int,
    frames: int,
    mode: str,
    resolution: str,
    seconds_per_frame: Decimal,
    queue: str,
    plan_name: str,
    mode_requested: str = "",
    kind: str = MediaKind.IMAGE,
) -> Quote:
    if mode not in Mode.values:
        raise ValueError(f"unknown mode {mode!r}")
    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
        raise ValueError("frames must be a positive integer")
    processed_width, processed_height = processed_size(width, height, resolution)
    scaled = (processed_width, processed_height) != (width, height)
    coefficient = pricing.resolution_coefficient(
        resolution=resolution, width=processed_width, height=processed_height, scaled=scaled
    )
    weight = pricing.mode_weight(mode)
    # Rounded up, not half-up like the charge: the quote is a ceiling, and a half-up quote would
    # sit below its own estimate (0.1114 quoted 0.11 while the same GPU time charges 0.11, and
    # 2 % more charges 0.12 and is capped).
    amount = charge_amount(
        frames=frames,
        resolution_coefficient=coefficient,
        mode_weight=weight,
        gpu_seconds=seconds_per_frame,
        unit_price=pricing.unit_price,
        minimum_charge=pricing.minimum_charge,
        minor_unit_exponent=pricing.minor_unit_exponent,
        rounding=ROUND_CEILING,
    )
    return Quote(
        frames=frames,
        processed_width=processed_width,
        processed_height=processed_height,
        resolution_coefficient=coefficient,
        mode_weight=weight,
        gpu_seconds_estimate=(seconds_per_frame * frames).quantize(GPU_SECONDS_PLACES, ROUND_HALF_UP),
        unit_price=pricing.unit_price,
        amount=amount,
        hold_amount=amount,  # the hold is the quote: no hidden multiplier above what was shown
        scaled=scaled,
        currency=pricing.currency,
        queue=queue,
        mode=mode,
        resolution=resolution,
        gpu_seconds_per_frame_estimate=seconds_per_frame,
        minimum_charge=pricing.minimum_charge,
        plan=plan_name,
        mode_requested=mode_requested or mode,
        kind=kind,
        pixel_class=pixel_class(processed_width, processed_height),
        minor_unit_exponent=pricing.minor_unit_exponent,
    )


def quote_job(
    *, user, width: int, height: int, frames: int, mode: str, resolution: str, kind: str = ""
) -> Quote:
    """Price a job on the user's plan. Writes nothing. The one function behind every price shown:
    the upload page, POST /api/v1/quotes and the job's stored quote.

    `width`/`height`: the target's own size (the processed size is derived here); `frames`: 1 for
    a photo, the probed count for a video; `kind` defaults to video when frames > 1. The mode is
    priced as the mode it runs as on this install (selectors.runs_as); the GPU time is the
    speed model fitted to this mode's and media kind's measurements, at a high percentile of their
    spread (billing.calibration), for the processed size and frame count.
    """
    if resolution not in Resolution.values:
        raise ValueError(f"unknown resolution {resolution!r}")
    if mode not in Mode.values:
        raise ValueError(f"unknown mode {mode!r}")
    kind = kind or (MediaKind.VIDEO if frames > 1 else MediaKind.IMAGE)
    if kind not in MediaKind.values:
        raise ValueError(f"unknown media kind {kind!r}")
    runs_as = selectors.runs_as(mode)
    processed_width, processed_height = processed_size(width, height, resolution)
    plan = selectors.plan_for_user(user=user)
    return _quote(
        pricing=plan.pricing(),
        width=width,
        height=height,
        frames=frames,
        mode=runs_as,
        resolution=resolution,
        seconds_per_frame=selectors.gpu_seconds_per_frame_estimate(
            mode=runs_as, kind=kind, width=processed_width, height=processed_height, frames=frames
        ),
        queue=plan.gpu_queue,
        plan_name=plan.name,
        mode_requested=mode,
        kind=kind,
    )


def hold_place(*, user, job_id: uuid.UUID, quote: Quote) -> LedgerEntry:
    """Reserve quote.hold_amount for the job, or raise InsufficientCredit and store nothing.

    The account row is locked (SELECT … FOR UPDATE) before available credit is read, so parallel
    submissions for one user are serialised and can never overdraw. Placing the same job's hold
    again returns the existing entry.
    """
    if quote.hold_amount <= 0:
        raise ValueError("a hold must be positive")
    with transaction.atomic():
        account = _locked_account(user=user)
        existing = LedgerEntry.objects.filter(job_id=job_id, kind=EntryKind.HOLD).first()
        if existing is not None:
            return _same_account(existing, account)
        plan = account.plan or selectors.default_plan()
        if quote.currency != plan.currency:
            raise PlanChanged()
        available = selectors.account_balance_for(account=account).available
        if quote.hold_amount > available:
            raise InsufficientCredit(required=quote.hold_amount, available=available, quote=quote)
        try:
            with transaction.atomic():
                return LedgerEntry.objects.create(
                    account=account,
                    kind=EntryKind.HOLD,
                    amount=quote.hold_amount,
                    job_id=job_id,
                    reason="hold at submit",
                    details={"quote": quote.as_dict(), "plan": plan.pricing().as_dict()},
                )
        except IntegrityError:
            # Another process placed it between our check and insert (only possible for a new
            # account's first hold on a database without row locks).
            return _same_account(LedgerEntry.objects.get(job_id=job_id, kind=EntryKind.HOLD), account)


def _same_account(entry: LedgerEntry, account: Account) -> LedgerEntry:
    if entry.account_id != account.pk:
        raise ValueError(f"job {entry.job_id} already has a hold on another account")
    return entry


def _open_hold(job_id: uuid.UUID) -> tuple[LedgerEntry | None, Account | None]:
    """The job's hold and its locked account, or (None, None)."""
    hold = LedgerEntry.objects.filter(job_id=job_id, kind=EntryKind.HOLD).first()
    if hold is None:
        return None, None
    return hold, _locked_account_by_pk(hold.account_id)


def hold_capture(*, job_id: uuid.UUID, usage: Usage) -> Charge:
    """Charge the job for what it used: min(formula on the measured work, quote) is captured, the
    rest released. The quote is a promise: the charge is never above it.

    Prices are those snapshotted on the hold (the prices the user was quoted); GPU time is measured;
    the mode weight is that of the mode that ran (usage.mode), the coefficient that of the processed
    size. Idempotent: a second call returns the same Charge and writes nothing. Also records the
    measured GPU seconds per frame for future quotes.
    """
    _require_decimal("usage.gpu_seconds", usage.gpu_seconds)
    _require_decimal("usage.wall_seconds", usage.wall_seconds)
    if usage.frames < 1 or usage.gpu_seconds < 0:
        raise ValueError("usage needs frames >= 1 and gpu_seconds >= 0")
    with transaction.atomic():
        hold, account = _open_hold(job_id)
        if hold is None:
            raise NoHold()
        existing = Charge.objects.filter(job_id=job_id).first()
        if existing is not None:
            return existing
        if LedgerEntry.objects.filter(job_id=job_id, kind=EntryKind.RELEASE).exists():
            raise HoldClosed()
        pricing = PlanPricing.from_dict(hold.details["plan"])
        seconds_per_frame = (usage.gpu_seconds / usage.frames).quantize(
            GPU_SECONDS_PER_FRAME_PLACES, ROUND_HALF_UP
        )
        coefficient = pricing.resolution_coefficient(
            resolution=usage.resolution,
            width=usage.width,
            height=usage.height,
            scaled=bool(hold.details.get("quote", {}).get("scaled", True)),
        )
        weight = pricing.mode_weight(usage.mode)
        computed = charge_amount(
            frames=usage.frames,
            resolution_coefficient=coefficient,
            mode_weight=weight,
            gpu_seconds=seconds_per_frame,
            unit_price=pricing.unit_price,
            minimum_charge=pricing.minimum_charge,
            minor_unit_exponent=pricing.minor_unit_exponent,
        )
        quoted = Decimal(hold.details.get("quote", {}).get("amount", hold.amount))
        ceiling = min(quoted, hold.amount)
        captured = min(computed, ceiling)
        remainder = hold.amount - captured
        gpu_seconds = usage.gpu_seconds.quantize(GPU_SECONDS_PLACES, ROUND_HALF_UP)
        try:
            with transaction.atomic():
                capture = LedgerEntry.objects.create(
                    account=account,
                    kind=EntryKind.CAPTURE,
                    amount=captured,
                    job_id=job_id,
                    reason="job succeeded",
                )
                if remainder > 0:
                    LedgerEntry.objects.create(
                        account=account,
                        kind=EntryKind.RELEASE,
                        amount=remainder,
                        job_id=job_id,
                        reason="unused part of the hold",
                    )
                charge = Charge.objects.create(
                    job_id=job_id,
                    account=account,
                    capture_entry=capture,
                    frames=usage.frames,
                    width=usage.width,
                    height=usage.height,
                    mode=usage.mode,
                    mode_requested=usage.mode_requested
                    or hold.details.get("quote", {}).get("mode_requested", usage.mode),
                    resolution=usage.resolution,
                    resolution_coefficient=coefficient,
                    mode_weight=weight,
                    gpu_seconds=gpu_seconds,
                    gpu_seconds_per_frame=seconds_per_frame,
                    wall_seconds=usage.wall_seconds.quantize(GPU_SECONDS_PLACES, ROUND_HALF_UP),
                    stage_seconds={name: float(seconds) for name, seconds in usage.stage_seconds.items()},
                    unit_price=pricing.unit_price,
                    minimum_charge=pricing.minimum_charge,
                    computed_amount=computed,
                    quoted_amount=quoted,
                    held_amount=hold.amount,
                    amount=captured,
                    capped=computed > ceiling,
                    gpu_cost=(gpu_seconds * selectors.gpu_cost_per_second()).quantize(
                        Decimal("0.0001"), ROUND_HALF_UP
                    ),
                    released_amount=remainder,
                    currency=pricing.currency,
                )
        except IntegrityError:
            # Only reachable without row locks; the other worker's charge stands.
            return Charge.objects.get(job_id=job_id)
        if seconds_per_frame > 0:  # a zero measurement (nothing ran on the GPU) says nothing about speed
            calibration_record(
                mode=usage.mode, resolution=usage.resolution, gpu_seconds_per_frame=seconds_per_frame
            )
            gpu_sample_record(
                mode=usage.mode,
                kind=usage.kind or (MediaKind.VIDEO if usage.frames > 1 else MediaKind.IMAGE),
                width=usage.width,
                height=usage.height,
                gpu_seconds_per_frame=seconds_per_frame,
                frames=usage.frames,
            )
        return charge


def hold_release(*, job_id: uuid.UUID, reason: str) -> LedgerEntry | None:
    """Give the whole hold back (failed, rejected, canceled). None when nothing is held any more."""
    reason = _require_reason(reason)
    with transaction.atomic():
        hold, account = _open_hold(job_id)
        if hold is None:
            return None
        if LedgerEntry.objects.filter(
            job_id=job_id, kind__in=[EntryKind.CAPTURE, EntryKind.RELEASE]
        ).exists():
            return None
        try:
            with transaction.atomic():
                return LedgerEntry.objects.create(
                    account=account, kind=EntryKind.RELEASE, amount=hold.amount, job_id=job_id, reason=reason
                )
        except IntegrityError:
            return None


@transaction.atomic
def job_refund(*, job_id: uuid.UUID, actor, reason: str) -> LedgerEntry:
    """Give a captured charge back, once."""
    reason = _require_reason(reason)
    capture = LedgerEntry.objects.filter(job_id=job_id, kind=EntryKind.CAPTURE).first()
    if capture is None:
        raise NotRefundable()
    account = _locked_account_by_pk(capture.account_id)
    if LedgerEntry.objects.filter(job_id=job_id, kind=EntryKind.REFUND).exists():
        raise AlreadyRefunded()
    try:
        with transaction.atomic():
            return LedgerEntry.objects.create(
                account=account,
                kind=EntryKind.REFUND,
                amount=capture.amount,
                job_id=job_id,
                actor=actor,
                reason=reason,
            )
    except IntegrityError as exc:
        raise AlreadyRefunded() from exc


def calibration_record(*, mode: str, resolution: str, gpu_seconds_per_frame: Decimal) -> GpuCalibration:
    """Move the estimate towards a measurement: new = old + α × (measured − old)."""
    with transaction.atomic():
        row = GpuCalibration.objects.select_for_update().filter(mode=mode, resolution=resolution).first()
        if row is None:
            seed = DEFAULT_GPU_SECONDS_PER_FRAME.get((mode, resolution), gpu_seconds_per_frame)
            try:
                with transaction.atomic():
                    row = GpuCalibration.objects.create(
                        mode=mode, resolution=resolution, gpu_seconds_per_frame=seed
                    )
            except IntegrityError:
                row = GpuCalibration.objects.select_for_update().get(mode=mode, resolution=resolution)
        updated = row.gpu_seconds_per_frame + EMA_ALPHA * (gpu_seconds_per_frame - row.gpu_seconds_per_frame)
        row.gpu_seconds_per_frame = updated.quantize(GPU_SECONDS_PER_FRAME_PLACES, ROUND_HALF_UP)
        row.samples += 1
        row.save(update_fields=["gpu_seconds_per_frame", "samples", "updated_at"])
        return row


def gpu_sample_record(
    *,
    mode: str,
    kind: str,
    width: int,
    height: int,
    gpu_seconds_per_frame: Decimal,
    frames: int = 1,
    origin: str = SampleOrigin.JOB,
) -> GpuSample:
    """Remember one measurement (a finished job, or a worker's warm-up run of its own speed):
    `frames` frames of width × height processed pixels, at `gpu_seconds_per_frame` each."""
    _require_decimal("gpu_seconds_per_frame", gpu_seconds_per_frame)
    if mode not in Mode.values or kind not in MediaKind.values:
        raise ValueError(f"unknown mode/kind {mode!r}/{kind!r}")
    if gpu_seconds_per_frame <= 0 or width < 1 or height < 1 or frames < 1:
        raise ValueError("a sample needs positive seconds, a size and frames")
    return GpuSample.objects.create(
        mode=mode,
        kind=kind,
        pixel_class=pixel_class(width, height),
        gpu_seconds_per_frame=gpu_seconds_per_frame.quantize(GPU_SECONDS_PER_FRAME_PLACES, ROUND_HALF_UP),
        frames=frames,
        pixels=width * height,
        origin=origin,
    )


def mode_runs_record(*, runs_as: dict[str, str], notes: dict[str, str] | None = None) -> None:
    """The GPU worker says what each mode really runs as on this install (at warm-up)."""
    notes = notes or {}
    with transaction.atomic():
        for requested, actual in runs_as.items():
            if requested not in Mode.values or actual not in Mode.values:
                raise ValueError(f"unknown mode {requested!r} -> {actual!r}")
            ModeRun.objects.update_or_create(
                requested=requested, defaults={"runs_as": actual, "note": notes.get(requested, "")[:300]}
            )
