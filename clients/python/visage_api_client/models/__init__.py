""" Contains all the data models used in inputs/outputs """

from .account_delete_request import AccountDeleteRequest
from .checkout import Checkout
from .checkout_request_channel_enum import CheckoutRequestChannelEnum
from .checkout_request_request import CheckoutRequestRequest
from .client_enum import ClientEnum
from .cost_state_enum import CostStateEnum
from .credit_packs import CreditPacks
from .direct_upload import DirectUpload
from .direct_upload_create_kind_enum import DirectUploadCreateKindEnum
from .direct_upload_create_request import DirectUploadCreateRequest
from .direct_upload_links import DirectUploadLinks
from .direct_upload_media import DirectUploadMedia
from .direct_upload_part import DirectUploadPart
from .direct_upload_part_received import DirectUploadPartReceived
from .face_analysis_enum import FaceAnalysisEnum
from .face_box import FaceBox
from .face_detect_request import FaceDetectRequest
from .face_source import FaceSource
from .faces import Faces
from .faces_enum import FacesEnum
from .field_enum import FieldEnum
from .job import Job
from .job_consent import JobConsent
from .job_consent_channel_enum import JobConsentChannelEnum
from .job_cost import JobCost
from .job_create_request import JobCreateRequest
from .job_create_request_face_sources_item import JobCreateRequestFaceSourcesItem
from .job_engine import JobEngine
from .job_engine_model_versions import JobEngineModelVersions
from .job_error import JobError
from .job_event import JobEvent
from .job_metrics import JobMetrics
from .job_metrics_stage_ms_type_0 import JobMetricsStageMsType0
from .job_moderation import JobModeration
from .job_options import JobOptions
from .job_page import JobPage
from .job_provenance import JobProvenance
from .job_queue import JobQueue
from .job_quote import JobQuote
from .job_result import JobResult
from .job_share import JobShare
from .job_source import JobSource
from .job_state_enum import JobStateEnum
from .job_target import JobTarget
from .job_urls import JobUrls
from .job_warming_up import JobWarmingUp
from .jobs_create_x_visage_client import JobsCreateXVisageClient
from .jobs_list_state import JobsListState
from .jobs_retrieve_until import JobsRetrieveUntil
from .ledger_entry import LedgerEntry
from .ledger_entry_kind_enum import LedgerEntryKindEnum
from .me import Me
from .media_kind_enum import MediaKindEnum
from .mode_enum import ModeEnum
from .moderation_state_enum import ModerationStateEnum
from .pack import Pack
from .paginated_ledger_entry_list import PaginatedLedgerEntryList
from .patched_job_update_request import PatchedJobUpdateRequest
from .problem import Problem
from .problem_code import ProblemCode
from .problem_errors import ProblemErrors
from .problem_links import ProblemLinks
from .provider_enum import ProviderEnum
from .push_device import PushDevice
from .push_device_register_request import PushDeviceRegisterRequest
from .push_platform_enum import PushPlatformEnum
from .quote import Quote
from .quote_links import QuoteLinks
from .quote_request_request import QuoteRequestRequest
from .quote_target import QuoteTarget
from .resolution_enum import ResolutionEnum
from .share_link import ShareLink
from .signed_in_device import SignedInDevice
from .signed_in_device_list_item import SignedInDeviceListItem
from .token import Token
from .token_create_request import TokenCreateRequest
from .token_refresh_request import TokenRefreshRequest
from .token_type_enum import TokenTypeEnum
from .unit_enum import UnitEnum

__all__ = (
    "AccountDeleteRequest",
    "Checkout",
    "CheckoutRequestChannelEnum",
    "CheckoutRequestRequest",
    "ClientEnum",
    "CostStateEnum",
    "CreditPacks",
    "DirectUpload",
    "DirectUploadCreateKindEnum",
    "DirectUploadCreateRequest",
    "DirectUploadLinks",
    "DirectUploadMedia",
    "DirectUploadPart",
    "DirectUploadPartReceived",
    "FaceAnalysisEnum",
    "FaceBox",
    "FaceDetectRequest",
    "Faces",
    "FacesEnum",
    "FaceSource",
    "FieldEnum",
    "Job",
    "JobConsent",
    "JobConsentChannelEnum",
    "JobCost",
    "JobCreateRequest",
    "JobCreateRequestFaceSourcesItem",
    "JobEngine",
    "JobEngineModelVersions",
    "JobError",
    "JobEvent",
    "JobMetrics",
    "JobMetricsStageMsType0",
    "JobModeration",
    "JobOptions",
    "JobPage",
    "JobProvenance",
    "JobQueue",
    "JobQuote",
    "JobResult",
    "JobsCreateXVisageClient",
    "JobShare",
    "JobsListState",
    "JobSource",
    "JobsRetrieveUntil",
    "JobStateEnum",
    "JobTarget",
    "JobUrls",
    "JobWarmingUp",
    "LedgerEntry",
    "LedgerEntryKindEnum",
    "Me",
    "MediaKindEnum",
    "ModeEnum",
    "ModerationStateEnum",
    "Pack",
    "PaginatedLedgerEntryList",
    "PatchedJobUpdateRequest",
    "Problem",
    "ProblemCode",
    "ProblemErrors",
    "ProblemLinks",
    "ProviderEnum",
    "PushDevice",
    "PushDeviceRegisterRequest",
    "PushPlatformEnum",
    "Quote",
    "QuoteLinks",
    "QuoteRequestRequest",
    "QuoteTarget",
    "ResolutionEnum",
    "ShareLink",
    "SignedInDevice",
    "SignedInDeviceListItem",
    "Token",
    "TokenCreateRequest",
    "TokenRefreshRequest",
    "TokenTypeEnum",
    "UnitEnum",
)
