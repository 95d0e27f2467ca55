"""Billing models: price plans, accounts, the immutable ledger, job charges and GPU-time calibration."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from billing.choices import JOB_KINDS, EntryKind, GpuQueue, Mode, Resolution
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
    hold_safety_factor = models.DecimalField(
        max_digits=6,
        decimal_places=3,
        default=Decimal("1.5"),
        validators=[MinValueValidator(Decimal(1))],
        help_text="A job holds its quote × this factor; the unused part is released at capture.",
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
            models.CheckConstraint(
                condition=Q(hold_safety_factor__gte=1), name="billing_plan_safety_factor_gte_1"
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
            hold_safety_factor=self.hold_safety_factor,
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
    mode = models.CharField(max_length=16, choices=Mode.choices)
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
    held_amount = models.DecimalField(max_digits=14, decimal_places=4)
    amount = models.DecimalField(max_digits=14, decimal_places=4, help_text="Captured: min(computed, held).")
    released_amount = models.DecimalField(max_digits=14, decimal_places=4)
    currency = models.CharField(max_length=3)
    created_at = models.DateTimeField(auto_now_add=True)

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
