"""Billing models: price plans, accounts, the immutable ledger, job charges and GPU-time calibration."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from billing import currencies
from billing.choices import (
    JOB_KINDS,
    PAYMENT_KINDS,
    CheckoutStatus,
    EntryKind,
    GpuQueue,
    MediaKind,
    Mode,
    PaymentProvider,
    PixelClass,
    Resolution,
    SampleOrigin,
)
from billing.pricing import PlanPricing, parse_tiers

_NON_NEGATIVE = [MinValueValidator(Decimal(0))]


def default_original_tiers() -> list[list[int | str | None]]:
    # ≤ 720p-sized, ≤ 1080p-sized, ≤ 4K-sized, anything larger.
    return [[921_600, "1.00"], [2_073_600, "1.50"], [8_294_400, "3.00"], [None, "5.00"]]


class PricePlan(models.Model):
    name = models.CharField(max_length=100, unique=True)
    is_default = models.BooleanField(
        default=False, help_text="The plan of every account without one. Exactly one plan is the default."
    )
    unit_price = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        validators=_NON_NEGATIVE,
        help_text="Price of one billing unit: one frame-GPU-second at coefficient 1 and weight 1.",
    )
    coefficient_720p = models.DecimalField(max_digits=8, decimal_places=4, validators=_NON_NEGATIVE)
    coefficient_1080p = models.DecimalField(max_digits=8, decimal_places=4, validators=_NON_NEGATIVE)
    original_coefficient_tiers = models.JSONField(
        default=default_original_tiers,
        help_text='For "original": [[max_pixels, "coefficient"], ...] ascending; null max_pixels = any size.',
    )
    weight_fast = models.DecimalField(max_digits=8, decimal_places=4, validators=_NON_NEGATIVE)
    weight_standard = models.DecimalField(max_digits=8, decimal_places=4, validators=_NON_NEGATIVE)
    weight_hq = models.DecimalField(max_digits=8, decimal_places=4, validators=_NON_NEGATIVE)
    minimum_charge = models.DecimalField(max_digits=12, decimal_places=4, validators=_NON_NEGATIVE)
    currency = models.CharField(max_length=3, default="USD", help_text="ISO 4217 code.")
    minor_unit_exponent = models.PositiveSmallIntegerField(
        default=2, validators=[MaxValueValidator(4)], help_text="2 for cents, 0 for JPY."
    )
    gpu_queue = models.CharField(max_length=16, choices=GpuQueue.choices, default=GpuQueue.DEFAULT)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"], condition=Q(is_default=True), name="billing_one_default_plan"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} (default)" if self.is_default else self.name

    def clean(self) -> None:
        try:
            parse_tiers(self.original_coefficient_tiers)
        except ValueError as exc:
            raise ValidationError({"original_coefficient_tiers": str(exc)}) from exc
        if (
            self.minimum_charge is not None
            and self.minimum_charge.as_tuple().exponent < -self.minor_unit_exponent
        ):
            # A minimum finer than the currency's minor unit would be rounded up anyway; say so.
            if self.minimum_charge != self.minimum_charge.quantize(
                Decimal(1).scaleb(-self.minor_unit_exponent)
            ):
                raise ValidationError({"minimum_charge": "Use at most as many decimals as the currency has."})
        if self.minimum_charge is not None and self.minimum_charge <= 0:
            # A job that costs nothing has no hold to place (hold_place refuses it): every submit
            # under such a plan failed. Give credits instead of a free plan.
            raise ValidationError({"minimum_charge": "Every job is charged at least this: it must be above 0."})
        self.currency = (self.currency or "").upper()

    def validate_constraints(self, exclude=None) -> None:
        # Making a plan the default un-defaults the old one in the same transaction
        # (PricePlanAdmin.save_model); the database constraint still guarantees at most one.
        super().validate_constraints(exclude={*(exclude or ()), "is_default"})

    def pricing(self) -> PlanPricing:
        return PlanPricing(
            unit_price=self.unit_price,
            coefficient_720p=self.coefficient_720p,
            coefficient_1080p=self.coefficient_1080p,
            original_coefficient_tiers=parse_tiers(self.original_coefficient_tiers),
            weight_fast=self.weight_fast,
            weight_standard=self.weight_standard,
            weight_hq=self.weight_hq,
            minimum_charge=self.minimum_charge,
            currency=self.currency,
            minor_unit_exponent=self.minor_unit_exponent,
        )


class Account(models.Model):
    """One per user. Its row is the lock that serialises holds (select_for_update); the money is
    never stored here, only derived from the ledger."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="billing_account"
    )
    plan = models.ForeignKey(
        PricePlan,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="accounts",
        help_text="Empty: the default plan.",
    )
    flagged_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when a card payment was refunded or disputed; staff look first."
    )
    flag_reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"account of {self.user}"


class ImmutableRowError(Exception):
    """A ledger row was about to be changed or deleted."""


class LedgerEntry(models.Model):
    """One immutable money movement. Amounts are positive magnitudes; only adjustments are signed."""

    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="entries")
    kind = models.CharField(max_length=16, choices=EntryKind.choices)
    amount = models.DecimalField(max_digits=14, decimal_places=4)
    job_id = models.UUIDField(null=True, blank=True, db_index=True)
    payment_ref = models.CharField(
        max_length=255, blank=True, default="", help_text="Purchases and reversals: the Checkout Session id."
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The staff member who made a manual entry; empty for the system.",
    )
    reason = models.CharField(max_length=500, blank=True)
    details = models.JSONField(default=dict, blank=True, help_text="Holds: the quote and the plan's prices.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "ledger entries"
        constraints = [
            # A retried or duplicated worker cannot hold, capture, release or refund a job twice.
            models.UniqueConstraint(
                fields=["job_id", "kind"],
                condition=Q(kind__in=JOB_KINDS),
                name="billing_one_entry_per_job_and_kind",
            ),
            models.CheckConstraint(
                condition=Q(kind__in=JOB_KINDS, job_id__isnull=False) | ~Q(kind__in=JOB_KINDS),
                name="billing_job_entries_have_job_id",
            ),
            # One purchase and at most one reversal per paid Checkout Session, whatever Stripe resends.
            models.UniqueConstraint(
                fields=["payment_ref", "kind"],
                condition=Q(kind__in=PAYMENT_KINDS),
                name="billing_one_entry_per_payment_and_kind",
            ),
            models.CheckConstraint(
                condition=~Q(kind__in=PAYMENT_KINDS) | ~Q(payment_ref=""),
                name="billing_payment_entries_have_ref",
            ),
            models.CheckConstraint(
                condition=Q(kind=EntryKind.ADJUSTMENT) | Q(amount__gte=0), name="billing_amount_non_negative"
            ),
            models.CheckConstraint(condition=Q(kind__in=EntryKind.values), name="billing_entry_kind_valid"),
        ]
        indexes = [models.Index(fields=["account", "kind"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.amount} ({self.account.user})"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise ImmutableRowError("ledger entries are immutable; add a new entry instead")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableRowError("ledger entries are immutable; add a new entry instead")


class Charge(models.Model):
    """The breakdown of a captured job: what was measured, the prices applied, what was taken."""

    job_id = models.UUIDField(unique=True)
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="charges")
    capture_entry = models.OneToOneField(LedgerEntry, on_delete=models.PROTECT, related_name="charge")
    frames = models.PositiveIntegerField()
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    mode = models.CharField(max_length=16, choices=Mode.choices, help_text="The mode that ran (priced).")
    mode_requested = models.CharField(max_length=16, blank=True, default="")
    resolution = models.CharField(max_length=16, choices=Resolution.choices)
    resolution_coefficient = models.DecimalField(max_digits=8, decimal_places=4)
    mode_weight = models.DecimalField(max_digits=8, decimal_places=4)
    gpu_seconds = models.DecimalField(max_digits=14, decimal_places=3)
    gpu_seconds_per_frame = models.DecimalField(max_digits=14, decimal_places=6)
    wall_seconds = models.DecimalField(max_digits=14, decimal_places=3)
    stage_seconds = models.JSONField(default=dict, blank=True)
    unit_price = models.DecimalField(max_digits=12, decimal_places=6)
    minimum_charge = models.DecimalField(max_digits=12, decimal_places=4)
    computed_amount = models.DecimalField(max_digits=14, decimal_places=4, help_text="The formula's result.")
    quoted_amount = models.DecimalField(
        max_digits=14, decimal_places=4, null=True, blank=True, help_text="The price shown before submit."
    )
    held_amount = models.DecimalField(max_digits=14, decimal_places=4)
    amount = models.DecimalField(
        max_digits=14, decimal_places=4, help_text="Paid: min(computed, quoted); never above the quote."
    )
    capped = models.BooleanField(
        default=False, help_text="The formula came out above the quote, so the quote was charged."
    )
    gpu_cost = models.DecimalField(
        max_digits=14,
        decimal_places=4,
        default=Decimal(0),
        help_text="What the GPU time cost the operator (GPU seconds × BILLING_GPU_COST_PER_SECOND).",
    )
    released_amount = models.DecimalField(max_digits=14, decimal_places=4)
    currency = models.CharField(max_length=3)
    # Indexed: /metrics counts the last hour's charges (billing.metrics) as a range on this column.
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(amount__lte=models.F("held_amount")), name="billing_capture_lte_hold"
            ),
        ]

    def __str__(self) -> str:
        return f"charge {self.amount} {self.currency} for job {self.job_id}"


class GpuCalibration(models.Model):
    """GPU seconds per frame by mode and resolution: an exponential moving average of measured jobs."""

    mode = models.CharField(max_length=16, choices=Mode.choices)
    resolution = models.CharField(max_length=16, choices=Resolution.choices)
    gpu_seconds_per_frame = models.DecimalField(max_digits=12, decimal_places=6)
    samples = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["mode", "resolution"]
        constraints = [
            models.UniqueConstraint(fields=["mode", "resolution"], name="billing_one_calibration_per_pair")
        ]

    def __str__(self) -> str:
        return f"{self.mode}/{self.resolution}: {self.gpu_seconds_per_frame} s/frame"


class GpuSample(models.Model):
    """One measured job (or warm-up run): quotes fit the speed model to recent ones
    (billing.calibration)."""

    mode = models.CharField(max_length=16, choices=Mode.choices, help_text="The mode that ran.")
    kind = models.CharField(max_length=8, choices=MediaKind.choices)
    pixel_class = models.CharField(max_length=8, choices=PixelClass.choices)
    gpu_seconds_per_frame = models.DecimalField(max_digits=12, decimal_places=6)
    frames = models.PositiveIntegerField(default=1)
    # Processed pixels per frame; 0 on samples recorded before the speed model (not used by it).
    pixels = models.PositiveBigIntegerField(default=0)
    origin = models.CharField(max_length=8, choices=SampleOrigin.choices, default=SampleOrigin.JOB)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["mode", "kind", "pixel_class", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.mode}/{self.kind}/{self.pixel_class}: {self.gpu_seconds_per_frame} s/frame ({self.origin})"


class ModeRun(models.Model):
    """What a requested mode really runs on this install, as the GPU worker reported at warm-up
    (e.g. "hq" runs as "standard" without an enhancer): quotes and charges price the mode that runs."""

    requested = models.CharField(max_length=16, choices=Mode.choices, unique=True)
    runs_as = models.CharField(max_length=16, choices=Mode.choices)
    note = models.CharField(max_length=300, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["requested"]

    def __str__(self) -> str:
        return f"{self.requested} runs as {self.runs_as}"


class CreditPack(models.Model):
    """Credits sold for money through Stripe Checkout (shown on the account page when active)."""

    name = models.CharField(max_length=100)
    credits = models.DecimalField(
        max_digits=12, decimal_places=2, validators=[MinValueValidator(Decimal("0.01"))]
    )
    price = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        validators=[MinValueValidator(Decimal("0.50"))],
        help_text="What the buyer pays, in the currency below (Stripe's minimum is about 0.50).",
    )
    currency = models.CharField(max_length=3, default="USD", help_text="ISO 4217 code.")
    active = models.BooleanField(default=True)
    position = models.PositiveSmallIntegerField(default=0, help_text="Order on the page (smallest first).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "price", "id"]

    def __str__(self) -> str:
        return f"{self.name}: {self.credits} credits for {self.price} {self.currency}"

    def clean(self) -> None:
        self.currency = (self.currency or "").upper()
        if self.price is not None and (problem := currencies.price_problem(self.price, self.currency)):
            raise ValidationError({"price": problem})

    @property
    def price_minor(self) -> int:
        """The price in the currency's minor unit (cents; whole yen for JPY), as the providers take it."""
        return currencies.minor_amount(self.price, self.currency)


class CheckoutSession(models.Model):
    """A purchase we started: a Stripe Checkout Session, or an Alipay / WeChat Pay order (our
    out_trade_no in `stripe_session_id`); credited once when the provider says it was paid."""

    stripe_session_id = models.CharField(max_length=255, unique=True)
    provider = models.CharField(max_length=16, choices=PaymentProvider.choices, default=PaymentProvider.STRIPE)
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="checkouts")
    pack = models.ForeignKey(CreditPack, null=True, on_delete=models.SET_NULL, related_name="checkouts")
    credits = models.DecimalField(max_digits=12, decimal_places=2)
    price = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3)
    status = models.CharField(max_length=16, choices=CheckoutStatus.choices, default=CheckoutStatus.OPEN)
    payment_intent = models.CharField(max_length=255, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    paid_at = models.DateTimeField(null=True, blank=True)
    reversed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"checkout {self.stripe_session_id} ({self.status})"


class PaymentNotification(models.Model):
    """Every Alipay / WeChat Pay notification processed, by the provider's id for it (notify_id,
    the notification id): a replayed or resent notification is a no-op."""

    provider = models.CharField(max_length=16, choices=PaymentProvider.choices)
    notification_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=64)
    outcome = models.CharField(max_length=300, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "notification_id"], name="billing_one_notification_per_id")
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.kind} {self.notification_id}"


class StripeEvent(models.Model):
    """Every Stripe webhook event processed, by its id: a replayed or duplicated event is a no-op."""

    event_id = models.CharField(max_length=255, unique=True)
    type = models.CharField(max_length=100)
    livemode = models.BooleanField(default=False)
    outcome = models.CharField(max_length=300, blank=True)
    # A refund/dispute for a payment not credited yet (events arrive in any order): applied later.
    pending_payment_intent = models.CharField(max_length=255, blank=True, default="", db_index=True)
    pending_object = models.JSONField(default=dict, blank=True)
    pending_reason = models.CharField(max_length=200, blank=True)
    pending_fraction = models.CharField(max_length=40, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at", "-id"]

    def __str__(self) -> str:
        return f"{self.type} {self.event_id}"


class TopUpRequest(models.Model):
    """A user's request for credits on an install without a payment provider: staff see it in the
    admin (and by email) and add the credits there."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        DONE = "done", "Credits added"
        DECLINED = "declined", "Declined"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="top_up_requests")
    pack = models.ForeignKey(CreditPack, null=True, blank=True, on_delete=models.SET_NULL)
    credits = models.DecimalField(max_digits=12, decimal_places=2, validators=[MinValueValidator(Decimal("0.01"))])
    note = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN, db_index=True)
    top_up = models.ForeignKey(LedgerEntry, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    handled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    handled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.account} asks for {self.credits} credits ({self.get_status_display()})"
