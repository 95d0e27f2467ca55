from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class Stage(models.TextChoices):
    INPUT = "input"  # source + target before any GPU time
    OUTPUT = "output"  # the finished result
    FRAMES = "frames"  # sampled video frames


class Decision(models.TextChoices):
    ALLOW = "allow"
    REVIEW = "review"
    REJECT = "reject"


class CheckOutcome(models.TextChoices):
    PASS = "pass"
    REVIEW = "review"
    REJECT = "reject"
    DISABLED = "disabled"  # not configured: shown, never counted as passed
    SKIPPED = "skipped"  # not needed (e.g. no blocked terms, an earlier check rejected)
    ERROR = "error"  # configured but failed: holds for review


class ReviewDecision(models.TextChoices):
    APPROVED = "approved"
    REJECTED = "rejected"


class ReportStatus(models.TextChoices):
    OPEN = "open"
    RESOLVED = "resolved"  # acted on: result taken down and/or face protected
    DISMISSED = "dismissed"


class ReporterRelation(models.TextChoices):
    SELF = "self", _("I am the person shown")
    REPRESENTATIVE = "representative", _("I act for the person shown (parent, guardian, lawyer)")
    OTHER = "other", _("Other")
