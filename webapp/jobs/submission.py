"""The fields a job is submitted with, checked one way for the API's create, the site's upload page
and its "Run again": raw submitted fields → `JobOptions` and `Consent`, or the errors per field.

A DRF serializer because the API's answers come from it as they are (its per-field messages in the
problem+json `errors`, and the OpenAPI schema of `POST /api/v1/jobs`); the site's forms are parsed
by the same class, so a rule added here holds on every path at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings
from django.core.validators import URLValidator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from billing.choices import Mode, Resolution

from .choices import FaceSelection
from .json_nesting import MAX_JSON_DEPTH, json_too_deep
from .services.intake import Consent, JobOptions
from .webhook_urls import WebhookRefused, check_webhook_url_at_submit

MAX_FACE_INDEX = 63  # faces are numbered largest first; no photo needs more
MAX_FACE_SOURCES = 16
# The resolution a job gets when the request names none: it follows the client (the design: mobile
# apps 720p, the web 1080p). An explicit `resolution` always wins.
CLIENTS = ("mobile", "web")
DEFAULT_RESOLUTION = {"mobile": Resolution.P720, "web": Resolution.P1080}


@extend_schema_field(
    {
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_FACE_SOURCES,
        "items": {
            "type": "object",
            "properties": {
                "face": {"type": "integer", "minimum": 0, "maximum": MAX_FACE_INDEX},
                "source": {"type": "integer", "minimum": 0},
            },
            "required": ["face", "source"],
            "additionalProperties": False,
        },
    }
)
class FaceSourcesField(serializers.JSONField):
    """A JSON list in one multipart field (documented as its part's JSON content)."""

    def to_internal_value(self, data):
        try:
            value = super().to_internal_value(data)
        except RecursionError:
            value = None
            too_deep = True
        else:
            too_deep = json_too_deep(value)
        if too_deep:
            raise serializers.ValidationError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep is not accepted.")
        return value


# Everything a create request sends. The files are read by `services.intake.job_submit` (which answers a
# specific `missing_file`); they are declared here so the schema documents them. No docstring: the
# API's schema would show it.
class SubmittedFields(serializers.Serializer):
    source = serializers.FileField(
        required=False,
        help_text="Photo of the face to use (JPEG, PNG, WebP). Repeat the field (up to VISAGE_MAX_SOURCE_PHOTOS) "
        "with more photos of the same person: the identity is averaged over all of them.",
    )
    target = serializers.FileField(required=False, help_text="Photo to put the face into")
    source_upload = serializers.ListField(
        child=serializers.UUIDField(),
        required=False,
        max_length=16,
        help_text="Instead of source files: the ids of completed direct uploads (POST /api/v1/uploads) of the "
        "source photo(s), repeated in order.",
    )
    target_upload = serializers.UUIDField(
        required=False,
        help_text="Instead of a target file: the id of a completed direct upload (POST /api/v1/uploads), "
        "for large videos sent in resumable parts straight to storage.",
    )
    mode = serializers.ChoiceField(choices=Mode.choices, default=Mode.STANDARD)
    resolution = serializers.ChoiceField(
        choices=Resolution.choices,
        required=False,
        help_text="When omitted, it follows the client: 720p for mobile apps, 1080p for the web. The client is "
        "the X-Visage-Client header (mobile or web) when sent, else the signed-in device's client (POST "
        "/api/v1/auth/token with device_name and client), else web for the site's session and mobile for "
        "bearer tokens.",
    )
    faces = serializers.ChoiceField(choices=FaceSelection.choices, default=FaceSelection.ONE)
    face_index = serializers.IntegerField(
        required=False, min_value=0, max_value=MAX_FACE_INDEX, allow_null=True
    )
    reference_face_index = serializers.IntegerField(
        required=False, min_value=0, max_value=MAX_FACE_INDEX, allow_null=True
    )
    webhook_url = serializers.URLField(
        required=False,
        allow_blank=True,
        max_length=2000,
        validators=[URLValidator(schemes=["http", "https"], message=gettext_lazy("Enter an http:// or https:// URL."))],
        help_text="Called with the signed job object when the job ends (succeeded, failed, rejected or "
        "canceled). http(s) only, no user name or password in it; private and loopback addresses are refused "
        "in production.",
    )
    face_sources = FaceSourcesField(
        required=False,
        binary=True,
        help_text="Different people into different faces of a photo: a JSON list like "
        '[{"face": 0, "source": 1}, {"face": 1, "source": 0}] pairing target faces (largest first) with '
        "source photos (in upload order). The source photos are then different people, not averaged.",
    )

    consent = serializers.BooleanField(
        required=False,
        help_text="Required, true: you confirm you have the right to use the face(s) in the photos you upload "
        "(the wording is VISAGE_CONSENT_TEXT; its version is stored with the job). Missing or false: 422 "
        "consent_required, and nothing is stored.",
    )

    def validate_face_sources(self, value):
        if not isinstance(value, list) or not value or len(value) > MAX_FACE_SOURCES:
            raise serializers.ValidationError(
                _('A list of 1 to %(max)d {"face": N, "source": M} pairs.') % {"max": MAX_FACE_SOURCES}
            )
        pairs = []
        for item in value:
            face, source = (item.get("face"), item.get("source")) if isinstance(item, dict) else (None, None)
            # bool is an int in Python: `true` must not pass as face 1.
            if not all(type(n) is int and 0 <= n for n in (face, source)) or set(item) - {"face", "source"}:
                raise serializers.ValidationError(
                    _('Each item must be {"face": N, "source": M} with whole numbers 0 or more.')
                )
            if face > MAX_FACE_INDEX:
                raise serializers.ValidationError(
                    _("Face %(face)d is out of range: faces are numbered 0 to %(max)d.") % {"face": face, "max": MAX_FACE_INDEX}
                )
            if source >= settings.MAX_SOURCE_PHOTOS:
                raise serializers.ValidationError(
                    _("Source %(source)d is out of range: at most %(max)d source photos, numbered from 0 in upload order.")
                    % {"source": source, "max": settings.MAX_SOURCE_PHOTOS}
                )
            pairs.append((face, source))
        if len({face for face, _source in pairs}) != len(pairs):
            raise serializers.ValidationError(_("Each target face can get only one source."))
        return tuple(pairs)

    def validate_webhook_url(self, value):
        if value:
            try:
                check_webhook_url_at_submit(value)
            except WebhookRefused as exc:
                raise serializers.ValidationError(str(exc)) from None
        return value

    def validate(self, attrs):
        if attrs.get("face_sources") and (attrs.get("face_index") is not None or attrs.get("faces") != "one"):
            raise serializers.ValidationError(
                {"face_sources": _("Use face_sources alone: it already says which faces to swap.")}
            )
        if attrs.get("faces") == FaceSelection.REFERENCE and attrs.get("reference_face_index") is None:
            raise serializers.ValidationError(
                {"reference_face_index": _("Required when faces is 'reference': which target face to match.")}
            )
        return attrs


class OptionsRefused(Exception):
    """The submitted fields do not make a valid job: messages per field, in the order of the fields."""

    def __init__(self, errors: dict[str, list[str]]):
        super().__init__(errors)
        self.errors = errors


@dataclass(frozen=True)
class Submission:
    options: JobOptions
    consent: Consent
    source_upload_ids: tuple = ()  # direct uploads named instead of posted files
    target_upload_id: object = None


def parse_submission(fields: Mapping, *, channel: str, client: str | None = None) -> Submission:
    """The options and consent in a create request's fields (a QueryDict or a dict of strings);
    `channel`: "api" or "site", recorded with the consent; `client`: "mobile" or "web", whose
    defaults apply (None: the site is the web, the API mobile). Raises OptionsRefused."""
    serializer = SubmittedFields(data=fields)
    if not serializer.is_valid():
        raise OptionsRefused(
            {field: [str(m) for m in messages] for field, messages in serializer.errors.items()}
        )
    data = serializer.validated_data
    options = JobOptions(
        mode=data["mode"],
        resolution=data.get("resolution") or DEFAULT_RESOLUTION[client or ("web" if channel == "site" else "mobile")],
        faces=data["faces"],
        face_index=data.get("face_index"),
        reference_face_index=data.get("reference_face_index"),
        webhook_url=data.get("webhook_url", ""),
        face_sources=data.get("face_sources") or (),
    )
    return Submission(
        options=options,
        consent=Consent(given=data.get("consent") is True, channel=channel),
        source_upload_ids=tuple(data.get("source_upload") or ()),
        target_upload_id=data.get("target_upload"),
    )
