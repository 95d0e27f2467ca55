"""Enumerations shared by billing models, services and the API."""

from __future__ import annotations

from django.db import models


class Mode(models.TextChoices):
    FAST = "fast", "Fast"
    STANDARD = "standard", "Standard"
    HQ = "hq", "High quality"


class Resolution(models.TextChoices):
    P720 = "720p", "720p"
    P1080 = "1080p", "1080p"
    ORIGINAL = "original", "Original"


class GpuQueue(models.TextChoices):
    """RQ GPU queue names (settings.GPU_QUEUES); a plan decides which one its users get."""

    VIP = "vip", "VIP"
    DEFAULT = "default", "Default"
    BATCH = "batch", "Batch"


class EntryKind(models.TextChoices):
    TOP_UP = "top_up", "Top-up"
    HOLD = "hold", "Hold"
    CAPTURE = "capture", "Capture"
    RELEASE = "release", "Release"
    REFUND = "refund", "Refund"
    ADJUSTMENT = "adjustment", "Adjustment"


# The ledger arithmetic, in one place (see selectors.account_balance):
#   balance = Σ top_up + Σ adjustment + Σ refund − Σ capture
#   held    = Σ hold − Σ capture − Σ release
#   available = balance − held
# Every amount is stored as a positive magnitude except adjustments, which are signed.
BALANCE_CREDIT_KINDS = (EntryKind.TOP_UP, EntryKind.ADJUSTMENT, EntryKind.REFUND)
BALANCE_DEBIT_KINDS = (EntryKind.CAPTURE,)
HELD_CREDIT_KINDS = (EntryKind.HOLD,)
HELD_DEBIT_KINDS = (EntryKind.CAPTURE, EntryKind.RELEASE)
# At most one entry of each of these kinds per job (enforced by a unique constraint).
JOB_KINDS = (EntryKind.HOLD, EntryKind.CAPTURE, EntryKind.RELEASE, EntryKind.REFUND)
