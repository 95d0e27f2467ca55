"""The API's response bodies as OpenAPI components: serializers that only *describe* what the views
send (the job JSON is built by webapp.jobs.payload; these never render it, so the bytes stay as they
are). tests/webapp/api/test_response_contract.py checks real responses against the schema built from
them; a field added to a payload without being described here fails that test.

Closed objects get `additionalProperties: false` (webapp.api.schema.close_objects), except the
snapshots stored with a job whose keys grew over time (OPEN_COMPONENTS).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from billing.choices import MediaKind, Mode, Resolution
from webapp.jobs.choices import FaceSelection, JobState

# Stored with the job as they were when it ran: older jobs have fewer keys, newer engines add some.
OPEN_COMPONENTS = ("JobEngine", "JobQuote")

MONEY = "Decimal string in the currency's minor unit, e.g. '6.75'"


def _money(help_text: str = MONEY, **kwargs) -> serializers.CharField:
    return serializers.CharField(help_text=help_text, **kwargs)


@extend_schema_serializer(component_name="JobQueue")
class JobQueueSerializer(serializers.Serializer):
    position = serializers.IntegerField(min_value=1, help_text="1: next to start.")
    start_seconds = serializers.IntegerField(min_value=0, help_text="Rough wait before it starts.")
    eta_seconds = serializers.IntegerField(min_value=1, help_text="Rough wait before it is done.")


@extend_schema_serializer(component_name="JobWarmingUp")
class JobWarmingUpSerializer(serializers.Serializer):
    ready_in_seconds = serializers.IntegerField(
        min_value=1, allow_null=True, help_text="Rough wait before they take jobs; null: any moment now."
    )


@extend_schema_serializer(component_name="FaceSource")
class FaceSourceSerializer(serializers.Serializer):
    face = serializers.IntegerField(min_value=0, help_text="Target face, largest first.")
    source = serializers.IntegerField(min_value=0, help_text="Source photo, in upload order.")


@extend_schema_serializer(component_name="JobOptions")
class JobOptionsSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(choices=Mode.choices)
    resolution = serializers.ChoiceField(choices=Resolution.choices)
    faces = serializers.ChoiceField(choices=FaceSelection.choices)
    face_index = serializers.IntegerField(allow_null=True)
    reference_face_index = serializers.IntegerField(allow_null=True)
    face_sources = FaceSourceSerializer(many=True, allow_null=True)
    webhook_url = serializers.URLField(allow_null=True)


@extend_schema_serializer(component_name="JobSource")
class JobSourceSerializer(serializers.Serializer):
    media_type = serializers.CharField(help_text="Sniffed from the content, e.g. image/png.")
    width = serializers.IntegerField()
    height = serializers.IntegerField()
    photos = serializers.IntegerField(min_value=1, help_text="How many source photos were sent.")


@extend_schema_serializer(component_name="JobTarget")
class JobTargetSerializer(serializers.Serializer):
    media_type = serializers.CharField()
    kind = serializers.ChoiceField(choices=MediaKind.choices)
    width = serializers.IntegerField()
    height = serializers.IntegerField()
    frames = serializers.IntegerField()
    fps = serializers.FloatField(allow_null=True)
    duration_seconds = serializers.FloatField(allow_null=True)
    has_audio = serializers.BooleanField()
    name = serializers.CharField(allow_null=True, help_text="The uploaded file's name; null for older jobs.")


@extend_schema_serializer(component_name="JobResult")
class JobResultSerializer(serializers.Serializer):
    """A succeeded job's result. Once its media were purged only `url`, `expires_at`, `media_type` and
    `deleted` (true) are sent, the URLs null."""

    url = serializers.URLField(
        allow_null=True, help_text="Presigned download (Content-Disposition: attachment)."
    )
    inline_url = serializers.URLField(required=False, help_text="Presigned, to show in place.")
    before_url = serializers.URLField(required=False, help_text="The target as it was, at the result's size.")
    thumbnail_url = serializers.URLField(
        required=False, help_text="A small WebP (404 for results older than thumbnails)."
    )
    expires_at = serializers.DateTimeField(allow_null=True, help_text="When the presigned URLs stop working.")
    media_type = serializers.CharField()
    bytes = serializers.IntegerField(required=False, allow_null=True)
    width = serializers.IntegerField(required=False, allow_null=True)
    height = serializers.IntegerField(required=False, allow_null=True)
    deleted = serializers.BooleanField()
    ai_generated = serializers.BooleanField(required=False)


@extend_schema_serializer(component_name="JobError")
class JobErrorSerializer(serializers.Serializer):
    code = serializers.CharField(
        help_text="e.g. no_face_detected, content_rejected, engine_error, worker_lost"
    )
    message = serializers.CharField()


@extend_schema_serializer(component_name="JobModeration")
class JobModerationSerializer(serializers.Serializer):
    state = serializers.ChoiceField(choices=["pending", "in_review", "rejected", "passed", "not_screened"])
    message = serializers.CharField(allow_null=True, help_text="Why it is in review (in_review only).")


@extend_schema_serializer(component_name="JobMetrics")
class JobMetricsSerializer(serializers.Serializer):
    queue_seconds = serializers.FloatField(allow_null=True)
    gpu_seconds = serializers.FloatField(allow_null=True)
    wall_seconds = serializers.FloatField(allow_null=True)
    stage_ms = serializers.DictField(
        child=serializers.FloatField(), allow_null=True, help_text="Milliseconds per engine stage."
    )
    attempts = serializers.IntegerField()


@extend_schema_serializer(component_name="JobEngine")
class JobEngineSerializer(serializers.Serializer):
    """What ran (diagnostics). Photo and video jobs fill different members; more may be added."""

    swapper = serializers.CharField(required=False)
    enhancer = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    enhancer_skipped = serializers.CharField(required=False)
    faces_swapped = serializers.IntegerField(required=False)
    source_photos = serializers.IntegerField(required=False)
    model_versions = serializers.DictField(child=serializers.IntegerField(), required=False)
    mode_requested = serializers.ChoiceField(choices=Mode.choices, required=False)
    mode_ran = serializers.ChoiceField(choices=Mode.choices, required=False)
    mode_steps = serializers.ListField(child=serializers.CharField(), required=False)
    mode_note = serializers.CharField(required=False)
    visible_mark = serializers.BooleanField(required=False)
    face_boxes = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=4, max_length=4),
        required=False,
    )
    face_analysis = serializers.ChoiceField(choices=["cached", "computed", "partly cached"], required=False)
    frames_swapped = serializers.IntegerField(required=False)
    segments = serializers.IntegerField(required=False)
    detections = serializers.IntegerField(required=False)
    tracking = serializers.BooleanField(required=False)
    audio = serializers.BooleanField(required=False)
    fps = serializers.FloatField(required=False)


@extend_schema_serializer(component_name="JobProvenance")
class JobProvenanceSerializer(serializers.Serializer):
    """The result's C2PA Content Credentials as read back after signing (`disabled`: not signed)."""

    manifest_present = serializers.BooleanField()
    disabled = serializers.BooleanField(required=False)
    validation_state = serializers.CharField(required=False, help_text="Trusted, Valid or Invalid.")
    signer = serializers.CharField(required=False)
    issuer = serializers.CharField(required=False)
    alg = serializers.CharField(required=False)
    failures = serializers.ListField(child=serializers.CharField(), required=False)
    content_id = serializers.CharField(required=False)


@extend_schema_serializer(component_name="JobConsent")
class JobConsentSerializer(serializers.Serializer):
    given_at = serializers.DateTimeField()
    version = serializers.CharField()
    channel = serializers.ChoiceField(choices=["api", "site"])


@extend_schema_serializer(component_name="JobQuote")
class JobQuoteSerializer(serializers.Serializer):
    """The price as quoted at submit (see POST /api/v1/quotes); older jobs lack the newer members."""

    frames = serializers.IntegerField(required=False)
    processed_width = serializers.IntegerField(required=False)
    processed_height = serializers.IntegerField(required=False)
    mode = serializers.CharField(required=False)
    resolution = serializers.CharField(required=False)
    resolution_coefficient = _money("Decimal string", required=False)
    mode_weight = _money("Decimal string", required=False)
    gpu_seconds_per_frame_estimate = _money("Decimal string", required=False)
    gpu_seconds_estimate = _money("Decimal string", required=False)
    unit_price = _money("Decimal string", required=False)
    minimum_charge = _money(required=False)
    amount = _money(required=False)
    hold_amount = _money(required=False)
    currency = serializers.CharField(required=False)
    queue = serializers.CharField(required=False)
    plan = serializers.CharField(required=False)
    mode_requested = serializers.CharField(required=False)
    kind = serializers.CharField(required=False)
    pixel_class = serializers.CharField(required=False)
    minor_unit_exponent = serializers.IntegerField(required=False)
    amount_minor = serializers.IntegerField(required=False)
    scaled = serializers.BooleanField(required=False)


@extend_schema_serializer(component_name="JobCost")
class JobCostSerializer(serializers.Serializer):
    """What the job costs, from the ledger (billing.selectors.job_cost)."""

    state = serializers.ChoiceField(choices=["reserved", "paid", "released", "refunded"])
    sentence = serializers.CharField(help_text="The money in one plain sentence.")
    currency = serializers.CharField()
    unit = serializers.ChoiceField(choices=["credits"])
    minor_unit_exponent = serializers.IntegerField()
    quoted = _money()
    quoted_minor = serializers.IntegerField()
    price = _money()
    held = _money()
    paid = _money(allow_null=True)
    paid_minor = serializers.IntegerField(allow_null=True)
    charge = _money(allow_null=True, help_text="The older name of `paid`.")
    released = _money()
    refunded = _money(allow_null=True)
    refunded_minor = serializers.IntegerField(allow_null=True)
    capped = serializers.BooleanField(allow_null=True, help_text="The charge was capped at the quoted price.")
    mode_charged = serializers.ChoiceField(choices=Mode.choices, allow_null=True)
    mode_requested = serializers.ChoiceField(choices=Mode.choices, allow_null=True)
    frames = serializers.IntegerField(allow_null=True)
    resolution_coefficient = serializers.CharField(allow_null=True)
    mode_weight = serializers.CharField(allow_null=True)
    gpu_seconds = serializers.CharField(allow_null=True)
    gpu_seconds_estimate = serializers.CharField(allow_null=True)
    gpu_seconds_per_frame = serializers.CharField(allow_null=True)
    formula_amount = _money(allow_null=True)
    wall_seconds = serializers.CharField(allow_null=True)
    unit_price = serializers.CharField(allow_null=True)


@extend_schema_serializer(component_name="JobShare")
class JobShareSerializer(serializers.Serializer):
    url = serializers.URLField(allow_null=True, help_text="null only after the server's secret key changed.")
    expires_at = serializers.DateTimeField()
    created_at = serializers.DateTimeField()
    views = serializers.IntegerField()


@extend_schema_serializer(component_name="JobUrls")
class JobUrlsSerializer(serializers.Serializer):
    self = serializers.URLField()
    cancel = serializers.URLField()
    share = serializers.URLField()
    page = serializers.URLField(help_text="The job's page on the site.")


@extend_schema_serializer(component_name="Job")
class JobSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    state = serializers.ChoiceField(choices=JobState.choices)
    terminal = serializers.BooleanField(
        help_text="succeeded, rejected, failed or canceled: it will not change."
    )
    progress = serializers.IntegerField(min_value=0, max_value=100)
    queue = JobQueueSerializer(allow_null=True, help_text="Its place in line while queued; else null.")
    warming_up = JobWarmingUpSerializer(
        allow_null=True,
        help_text="While the workers this job waits for are still starting (after a start or a restart of the "
        "service): about how long until they take it; else null. The job is kept and starts once they do.",
    )
    favourite = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    queued_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)
    options = JobOptionsSerializer()
    source = JobSourceSerializer()
    target = JobTargetSerializer()
    result_url = serializers.URLField(allow_null=True, help_text="= result.url")
    result = JobResultSerializer(allow_null=True, help_text="Once succeeded and visible; else null.")
    error = JobErrorSerializer(allow_null=True)
    moderation = JobModerationSerializer()
    metrics = JobMetricsSerializer()
    engine = JobEngineSerializer(allow_null=True)
    provenance = JobProvenanceSerializer(allow_null=True)
    consent = JobConsentSerializer(allow_null=True)
    quote = JobQuoteSerializer(allow_null=True)
    cost = JobCostSerializer(allow_null=True, help_text="null when billing never saw the job.")
    credits = serializers.CharField(help_text="The money in one plain sentence.")
    media_deleted = serializers.BooleanField()
    share = JobShareSerializer(allow_null=True, help_text="The active share link, if any.")
    urls = JobUrlsSerializer()


@extend_schema_serializer(component_name="JobPage")
class JobPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = JobSerializer(many=True)


@extend_schema_serializer(component_name="JobEvent")
class JobEventSerializer(serializers.Serializer):
    """The `data` of an `event: job` Server-Sent Event (`event: reset` carries `{}`: fetch your jobs again)."""

    id = serializers.UUIDField()
    state = serializers.ChoiceField(choices=JobState.choices)
    progress = serializers.IntegerField(min_value=0, max_value=100)
    deleted = serializers.BooleanField()
    version = serializers.IntegerField()
    terminal = serializers.BooleanField()
    updated_at = serializers.DateTimeField()
    url = serializers.URLField()


@extend_schema_serializer(component_name="FaceBox")
class FaceSerializer(serializers.Serializer):
    index = serializers.IntegerField(min_value=0, help_text="The face_index to send.")
    box = serializers.ListField(
        child=serializers.FloatField(),
        min_length=4,
        max_length=4,
        help_text="[x1, y1, x2, y2] in image pixels.",
    )
    score = serializers.FloatField()


@extend_schema_serializer(component_name="Faces")
class FacesSerializer(serializers.Serializer):
    width = serializers.IntegerField()
    height = serializers.IntegerField()
    min_face_px = serializers.IntegerField(
        help_text="A source face smaller than this is refused at screening."
    )
    faces = FaceSerializer(many=True)
