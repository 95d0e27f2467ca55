"""Moderation records. No image bytes are ever stored: hashes, scores, decisions and embeddings only."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .choices import CheckOutcome, Decision, ReporterRelation, ReportStatus, ReviewDecision, Stage


class Verdict(models.Model):
    """The decision on one screened subject (a job) at one stage, with every check that ran."""

    subject_id = models.UUIDField(db_index=True)  # the Job id (moderation does not import webapp)
    stage = models.CharField(max_length=16, choices=Stage.choices)
    decision = models.CharField(max_length=16, choices=Decision.choices)
    code = models.CharField(max_length=64, blank=True)
    message = models.TextField(blank=True)  # what the user sees
    latency_ms = models.FloatField(default=0)
    disabled_checks = models.JSONField(default=list, blank=True)  # checks that did NOT run, and why
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_decision = models.CharField(max_length=16, choices=ReviewDecision.choices, blank=True)
    review_note = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["subject_id", "stage"], name="verdict_one_per_subject_stage")
        ]
        permissions = [("review_content", "Can approve or reject content waiting in the review queue")]

    def __str__(self) -> str:
        return f"{self.stage} {self.decision} for {self.subject_id}"


class CheckResult(models.Model):
    """One check on one image: its outcome, score and threshold, and why (classes, terms, identity)."""

    verdict = models.ForeignKey(Verdict, on_delete=models.CASCADE, related_name="checks")
    check_name = models.CharField(max_length=32)  # nsfw, clip, ocr, identity, face_presence, known_hash
    role = models.CharField(max_length=32)  # source, target, output, frame N
    outcome = models.CharField(max_length=16, choices=CheckOutcome.choices)
    score = models.FloatField(null=True, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    code = models.CharField(max_length=64, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    elapsed_ms = models.FloatField(default=0)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.check_name} on {self.role}: {self.outcome}"


class ModerationRecord(models.Model):
    """Audit of one screened image. `known_bad` images are rejected on sight when uploaded again."""

    verdict = models.ForeignKey(Verdict, on_delete=models.CASCADE, related_name="records")
    role = models.CharField(max_length=32)
    sha256 = models.CharField(max_length=64, db_index=True)
    phash = models.CharField(max_length=16, db_index=True)
    dhash = models.CharField(max_length=16)
    width = models.PositiveIntegerField(default=0)
    height = models.PositiveIntegerField(default=0)
    decision = models.CharField(max_length=16, choices=Decision.choices)
    scores = models.JSONField(default=dict, blank=True)  # check → score
    known_bad = models.BooleanField(default=False, db_index=True)
    # Why it is known-bad. Only visual rejections (content_rejected) also match near-duplicates by
    # pHash: an image rejected for its text or for who is in it matches by exact SHA-256 only, so the
    # same photo without the text (or a different person's photo on the same background) passes.
    known_bad_code = models.CharField(max_length=64, blank=True)
    matched_record = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.role} {self.sha256[:12]} {self.decision}"


class BlockedTerm(models.Model):
    term = models.CharField(max_length=200, unique=True)
    active = models.BooleanField(default=True)
    note = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["term"]

    def __str__(self) -> str:
        return self.term


class ProtectedIdentity(models.Model):
    """A person who must never be swapped. Reference photos are embedded and then discarded."""

    name = models.CharField(max_length=200)
    note = models.TextField(blank=True)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "protected identities"

    def __str__(self) -> str:
        return self.name


class ProtectedFace(models.Model):
    identity = models.ForeignKey(ProtectedIdentity, on_delete=models.CASCADE, related_name="faces")
    embedding_kind = models.CharField(max_length=16)  # dlib128 | arcface512: compared only with its own kind
    vector = models.JSONField()  # list[float]
    source_sha256 = models.CharField(max_length=64, blank=True)  # which photo it came from, not the photo
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.identity} ({self.embedding_kind})"


class TakedownReport(models.Model):
    """A public abuse/takedown report (/report) from someone who found a result of themselves.

    Like everything here it stores no image: the reported file's SHA-256, what its Content
    Credentials said, and the largest face's embedding (so a moderator can protect the face in one
    action). `subject_id` is the job the report resolved to, if any.
    """

    created_at = models.DateTimeField(auto_now_add=True)
    reporter_name = models.CharField(max_length=200)
    reporter_email = models.EmailField()
    relation = models.CharField(max_length=16, choices=ReporterRelation.choices, default=ReporterRelation.SELF)
    details = models.TextField(blank=True)
    link = models.CharField(max_length=2000, blank=True)  # the result or share link as given
    subject_id = models.UUIDField(null=True, blank=True, db_index=True)  # the Job it points at
    file_sha256 = models.CharField(max_length=64, blank=True)
    file_provenance = models.JSONField(default=dict, blank=True)  # C2PA summary of the reported file
    face_embedding_kind = models.CharField(max_length=16, blank=True)
    face_vector = models.JSONField(null=True, blank=True)  # list[float]: the reported face
    status = models.CharField(max_length=16, choices=ReportStatus.choices, default=ReportStatus.OPEN, db_index=True)
    result_taken_down = models.BooleanField(default=False)
    protected_identity = models.ForeignKey(
        ProtectedIdentity, null=True, blank=True, on_delete=models.SET_NULL, related_name="reports"
    )
    handled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    handled_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Report #{self.pk} by {self.reporter_name} ({self.status})"
