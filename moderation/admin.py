"""Admin for verdicts (read-only audit), blocked terms and protected identities.

The review queue itself is the Job admin (webapp/admin.py): approving or rejecting is a job
transition, recorded here through moderation.reviews.verdict_record_review.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from . import reviews, selectors
from .models import BlockedTerm, CheckResult, ModerationRecord, ProtectedIdentity, Verdict


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class CheckResultInline(ReadOnlyInline):
    model = CheckResult
    fields = ["role", "check_name", "outcome", "score", "threshold", "code", "detail", "elapsed_ms"]
    readonly_fields = fields


class ModerationRecordInline(ReadOnlyInline):
    model = ModerationRecord
    fields = ["role", "decision", "known_bad", "sha256", "phash", "scores", "reviewed_by", "reviewed_at"]
    readonly_fields = fields


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = [
        "subject_id",
        "stage",
        "decision",
        "code",
        "disabled",
        "latency_ms",
        "review_decision",
        "reviewed_by",
        "created_at",
    ]
    list_filter = ["decision", "stage", "review_decision"]
    search_fields = ["subject_id"]
    inlines = [CheckResultInline, ModerationRecordInline]
    readonly_fields = [
        "subject_id",
        "stage",
        "decision",
        "code",
        "message",
        "latency_ms",
        "disabled_checks",
        "reasons",
        "reviewed_by",
        "reviewed_at",
        "review_decision",
        "review_note",  # written with the decision on the review desk: an audit record, not a draft
        "created_at",
        "updated_at",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("disabled checks"))
    def disabled(self, verdict: Verdict) -> str:
        return "; ".join(verdict.disabled_checks) or "—"

    @admin.display(description=gettext_lazy("reasons"))
    def reasons(self, verdict: Verdict) -> str:
        return "\n".join(selectors.verdict_reasons(verdict)) or _("every check passed")

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(ModerationRecord)
class ModerationRecordAdmin(admin.ModelAdmin):
    list_display = ["id", "role", "decision", "known_bad", "sha256", "phash", "reviewed_by", "created_at"]
    list_filter = ["decision", "known_bad", "role"]
    search_fields = ["sha256", "phash", "verdict__subject_id"]
    readonly_fields = [f.name for f in ModerationRecord._meta.fields if f.name != "known_bad"]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(BlockedTerm)
class BlockedTermAdmin(admin.ModelAdmin):
    list_display = ["term", "active", "note", "created_at"]
    list_filter = ["active"]
    search_fields = ["term"]


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class ReferencePhotosField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        if isinstance(data, list | tuple):
            return [super(ReferencePhotosField, self).clean(item, initial) for item in data]
        return [super().clean(data, initial)] if data else []


class ProtectedIdentityForm(forms.ModelForm):
    reference_photos = ReferencePhotosField(
        required=False,
        label=gettext_lazy("Reference photos"),
        help_text=gettext_lazy("Photos of the person. Only face embeddings are kept; the photos are discarded."),
    )

    class Meta:
        model = ProtectedIdentity
        fields = ["name", "note", "active"]


@admin.register(ProtectedIdentity)
class ProtectedIdentityAdmin(admin.ModelAdmin):
    form = ProtectedIdentityForm
    list_display = ["name", "active", "reference_faces", "created_by", "created_at"]
    list_filter = ["active"]
    search_fields = ["name"]
    readonly_fields = ["reference_faces", "created_by", "created_at"]

    @admin.display(description=gettext_lazy("reference faces"))
    def reference_faces(self, identity: ProtectedIdentity) -> int:
        return identity.faces.count() if identity.pk else 0

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
        added = 0
        for upload in form.cleaned_data.get("reference_photos") or []:
            try:
                reviews.protected_identity_add_reference(identity=obj, photo=upload.read())
                added += 1
            except ValidationError as exc:
                messages.warning(request, f"{upload.name}: {' '.join(exc.messages)}")
        if added:
            messages.success(
                request,
                ngettext(
                    "Stored %(count)d face embedding for %(name)s; the photo was discarded.",
                    "Stored %(count)d face embeddings for %(name)s; the photos were discarded.",
                    added,
                )
                % {"count": added, "name": obj.name},
            )
