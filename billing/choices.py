"""Enumerations shared by billing models, services and the API."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class Mode(models.TextChoices):
    FAST = "fast", _("Fast")
    STANDARD = "standard", _("Standard")
    HQ = "hq", _("High quality")


class Resolution(models.TextChoices):
    P720 = "720p", "720p"
    P1080 = "1080p", "1080p"
    ORIGINAL = "original", _("Original")


class GpuQueue(models.TextChoices):
    """RQ GPU queue names (settings.GPU_QUEUES); a plan decides which one its users get."""

    VIP = "vip", "VIP"
    DEFAULT = "default", "Default"
    BATCH = "batch", "Batch"


class EntryKind(models.TextChoices):
    TOP_UP = "top_up", _("Top-up")
    HOLD = "hold", _("Hold")
    CAPTURE = "capture", _("Capture")
    RELEASE = "release", _("Release")
    REFUND = "refund", _("Refund")
    ADJUSTMENT = "adjustment", _("Adjustment")
    PURCHASE = "purchase", _("Purchase")  # credits bought with a card (Stripe Checkout)
    REVERSAL = "reversal", _("Purchase reversed")  # a bought pack refunded or disputed at Stripe


# The ledger arithmetic, in one place (see selectors.account_balance):
#   balance = Σ top_up + Σ adjustment + Σ refund + Σ purchase − Σ capture − Σ reversal
#   held    = Σ hold − Σ capture − Σ release
#   available = balance − held
# Every amount is stored as a positive magnitude except adjustments, which are signed.
BALANCE_CREDIT_KINDS = (EntryKind.TOP_UP, EntryKind.ADJUSTMENT, EntryKind.REFUND, EntryKind.PURCHASE)
BALANCE_DEBIT_KINDS = (EntryKind.CAPTURE, EntryKind.REVERSAL)
HELD_CREDIT_KINDS = (EntryKind.HOLD,)
HELD_DEBIT_KINDS = (EntryKind.CAPTURE, EntryKind.RELEASE)
# At most one entry of each of these kinds per job (enforced by a unique constraint).
JOB_KINDS = (EntryKind.HOLD, EntryKind.CAPTURE, EntryKind.RELEASE, EntryKind.REFUND)
# At most one entry of each of these kinds per external payment reference (a Checkout Session id).
PAYMENT_KINDS = (EntryKind.PURCHASE, EntryKind.REVERSAL)


class MediaKind(models.TextChoices):
    """What GPU time is calibrated separately for: a photo, or a video's frames (tracked, cheaper)."""

    IMAGE = "image", _("Photo")
    VIDEO = "video", _("Video")


class PixelClass(models.TextChoices):
    """Processed size classes for GPU-time calibration (by pixel count, whatever preset was asked)."""

    SD = "sd", "up to 1280×720 pixels"
    HD = "hd", "up to 1920×1080 pixels"
    UHD = "uhd", "larger than 1920×1080"


class SampleOrigin(models.TextChoices):
    JOB = "job", "Measured job"
    WARMUP = "warmup", "Worker warm-up"


class PaymentProvider(models.TextChoices):
    STRIPE = "stripe", _("Card (Stripe)")
    ALIPAY = "alipay", _("Alipay 支付宝")
    WECHATPAY = "wechatpay", _("WeChat Pay 微信支付")


class CheckoutStatus(models.TextChoices):
    OPEN = "open", "Open"
    PAID = "paid", "Paid: credits added"
    EXPIRED = "expired", "Expired"
    REVERSED = "reversed", "Reversed (refund or dispute)"
