"""Site forms: sign-up, API token names, takedown reports. A job's options are parsed like the API's
(webapp/site/submitting.py)."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from moderation.choices import ReporterRelation


class SignupForm(UserCreationForm):
    email = forms.EmailField(required=False, label=_("Email"), help_text=_("Optional: for receipts and password resets."))

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


class ApiTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text=_("A name to tell this token apart, e.g. “iOS app”."))


class TakedownReportForm(forms.Form):
    """/report: someone who found a swap of themselves. A link or the file is required."""

    reporter_name = forms.CharField(max_length=200, label=_("Your name"))
    reporter_email = forms.EmailField(label=_("Your email"), help_text=_("We reply here."))
    relation = forms.ChoiceField(choices=ReporterRelation.choices, initial=ReporterRelation.SELF, label=_("You are"))
    link = forms.CharField(
        max_length=2000, required=False, label=_("Link to the result"),
        help_text=_("The result’s page, download or share link."),
    )
    file = forms.FileField(required=False, label=_("Or the file itself"), help_text=_("The image or video you found."))
    details = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False, label=_("Anything else we should know"))

    def __init__(self, *args, max_bytes: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_bytes = max_bytes

    def clean_file(self):
        upload = self.cleaned_data.get("file")
        if upload and upload.size > self.max_bytes:
            raise forms.ValidationError(_("That file is too large; send a link to it instead."))
        return upload

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("link", "").strip() and not cleaned.get("file"):
            raise forms.ValidationError(_("Send a link to the result or the file itself, so we can find it."))
        return cleaned
