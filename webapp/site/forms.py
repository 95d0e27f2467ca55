"""Site forms: sign-up, the no-JS job options, API token names. Files are checked by webapp.jobs.services.intake.job_submit."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm

from billing.choices import Mode, Resolution
from moderation.choices import ReporterRelation
from webapp.jobs.choices import FaceSelection


class SignupForm(UserCreationForm):
    email = forms.EmailField(required=False, help_text="Optional: for receipts and password resets.")

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


class JobOptionsForm(forms.Form):
    """The options part of the upload form (the files go through webapp.jobs.services.intake.job_submit)."""

    mode = forms.ChoiceField(choices=Mode.choices, initial=Mode.STANDARD)
    resolution = forms.ChoiceField(choices=Resolution.choices, initial=Resolution.P720)
    # The largest face, every face, a face picked on the target photo, or everyone who looks like
    # a face picked there (reference).
    faces = forms.ChoiceField(choices=FaceSelection.choices, initial=FaceSelection.ONE)
    face_index = forms.IntegerField(required=False, min_value=0, max_value=63)
    reference_face_index = forms.IntegerField(required=False, min_value=0, max_value=63)
    consent = forms.BooleanField(required=False)  # required by job_submit, which says why when missing

    def clean(self):
        data = super().clean()
        if data.get("faces") == FaceSelection.REFERENCE and data.get("reference_face_index") is None:
            self.add_error("faces", "Pick the person to match on the photo.")
        return data

    def face_options(self) -> dict:
        """The face part of services.intake.JobOptions, each number only with the choice it belongs to."""
        data = self.cleaned_data
        return {
            "faces": data["faces"],
            "face_index": data["face_index"] if data["faces"] == FaceSelection.ONE else None,
            "reference_face_index": (
                data["reference_face_index"] if data["faces"] == FaceSelection.REFERENCE else None
            ),
        }


class ApiTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="A name to tell this token apart, e.g. “iOS app”.")


class TakedownReportForm(forms.Form):
    """/report: someone who found a swap of themselves. A link or the file is required."""

    reporter_name = forms.CharField(max_length=200, label="Your name")
    reporter_email = forms.EmailField(label="Your email", help_text="We reply here.")
    relation = forms.ChoiceField(choices=ReporterRelation.choices, initial=ReporterRelation.SELF, label="You are")
    link = forms.CharField(
        max_length=2000, required=False, label="Link to the result",
        help_text="The result’s page, download or share link.",
    )
    file = forms.FileField(required=False, label="Or the file itself", help_text="The image or video you found.")
    details = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False, label="Anything else we should know")

    def __init__(self, *args, max_bytes: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_bytes = max_bytes

    def clean_file(self):
        upload = self.cleaned_data.get("file")
        if upload and upload.size > self.max_bytes:
            raise forms.ValidationError("That file is too large; send a link to it instead.")
        return upload

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("link", "").strip() and not cleaned.get("file"):
            raise forms.ValidationError("Send a link to the result or the file itself, so we can find it.")
        return cleaned
