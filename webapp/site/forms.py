"""Site forms: sign-up, the no-JS job options, API token names. Files are checked by webapp.jobs.services.job_submit."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm

from billing.choices import Mode, Resolution
from webapp.jobs.choices import FaceSelection


class SignupForm(UserCreationForm):
    email = forms.EmailField(required=False, help_text="Optional: for receipts and password resets.")

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


class JobOptionsForm(forms.Form):
    """The options part of the upload form (the files go through webapp.jobs.services.job_submit)."""

    mode = forms.ChoiceField(choices=Mode.choices, initial=Mode.STANDARD)
    resolution = forms.ChoiceField(choices=Resolution.choices, initial=Resolution.P720)
    # The site offers the largest face, every face, or a face picked on the target photo.
    faces = forms.ChoiceField(
        choices=[c for c in FaceSelection.choices if c[0] != FaceSelection.REFERENCE],
        initial=FaceSelection.ONE,
    )
    face_index = forms.IntegerField(required=False, min_value=0, max_value=63)


class ApiTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="A name to tell this token apart, e.g. “iOS app”.")
