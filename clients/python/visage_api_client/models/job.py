from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.job_state_enum import JobStateEnum
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.job_consent import JobConsent
  from ..models.job_cost import JobCost
  from ..models.job_engine import JobEngine
  from ..models.job_error import JobError
  from ..models.job_metrics import JobMetrics
  from ..models.job_moderation import JobModeration
  from ..models.job_options import JobOptions
  from ..models.job_provenance import JobProvenance
  from ..models.job_queue import JobQueue
  from ..models.job_quote import JobQuote
  from ..models.job_result import JobResult
  from ..models.job_share import JobShare
  from ..models.job_source import JobSource
  from ..models.job_target import JobTarget
  from ..models.job_urls import JobUrls
  from ..models.job_warming_up import JobWarmingUp





T = TypeVar("T", bound="Job")



@_attrs_define
class Job:
    """ 
        Attributes:
            id (UUID):
            state (JobStateEnum): * `created` - Created
                * `screening` - Screening
                * `review` - Review
                * `queued` - Queued
                * `running` - Running
                * `succeeded` - Succeeded
                * `rejected` - Rejected
                * `failed` - Failed
                * `canceled` - Canceled
            terminal (bool): succeeded, rejected, failed or canceled: it will not change.
            progress (int):
            queue (JobQueue | None): Its place in line while queued; else null.
            warming_up (JobWarmingUp | None): While the workers this job waits for are still starting (after a start or a
                restart of the service): about how long until they take it; else null. The job is kept and starts once they do.
            favourite (bool):
            created_at (datetime.datetime):
            queued_at (datetime.datetime | None):
            started_at (datetime.datetime | None):
            completed_at (datetime.datetime | None):
            options (JobOptions):
            source (JobSource):
            target (JobTarget):
            result_url (None | str): = result.url
            result (JobResult | None): Once succeeded and visible; else null.
            error (JobError | None):
            moderation (JobModeration):
            metrics (JobMetrics):
            engine (JobEngine | None):
            provenance (JobProvenance | None):
            consent (JobConsent | None):
            quote (JobQuote | None):
            cost (JobCost | None): null when billing never saw the job.
            credits_ (str): The money in one plain sentence.
            media_deleted (bool):
            share (JobShare | None): The active share link, if any.
            urls (JobUrls):
     """

    id: UUID
    state: JobStateEnum
    terminal: bool
    progress: int
    queue: JobQueue | None
    warming_up: JobWarmingUp | None
    favourite: bool
    created_at: datetime.datetime
    queued_at: datetime.datetime | None
    started_at: datetime.datetime | None
    completed_at: datetime.datetime | None
    options: JobOptions
    source: JobSource
    target: JobTarget
    result_url: None | str
    result: JobResult | None
    error: JobError | None
    moderation: JobModeration
    metrics: JobMetrics
    engine: JobEngine | None
    provenance: JobProvenance | None
    consent: JobConsent | None
    quote: JobQuote | None
    cost: JobCost | None
    credits_: str
    media_deleted: bool
    share: JobShare | None
    urls: JobUrls





    def to_dict(self) -> dict[str, Any]:
        from ..models.job_consent import JobConsent # noqa: PLC0415
        from ..models.job_cost import JobCost # noqa: PLC0415
        from ..models.job_engine import JobEngine # noqa: PLC0415
        from ..models.job_error import JobError # noqa: PLC0415
        from ..models.job_metrics import JobMetrics # noqa: PLC0415
        from ..models.job_moderation import JobModeration # noqa: PLC0415
        from ..models.job_options import JobOptions # noqa: PLC0415
        from ..models.job_provenance import JobProvenance # noqa: PLC0415
        from ..models.job_queue import JobQueue # noqa: PLC0415
        from ..models.job_quote import JobQuote # noqa: PLC0415
        from ..models.job_result import JobResult # noqa: PLC0415
        from ..models.job_share import JobShare # noqa: PLC0415
        from ..models.job_source import JobSource # noqa: PLC0415
        from ..models.job_target import JobTarget # noqa: PLC0415
        from ..models.job_urls import JobUrls # noqa: PLC0415
        from ..models.job_warming_up import JobWarmingUp # noqa: PLC0415
        id = str(self.id)

        state = self.state.value

        terminal = self.terminal

        progress = self.progress

        queue: dict[str, Any] | None
        if isinstance(self.queue, JobQueue):
            queue = self.queue.to_dict()
        else:
            queue = self.queue

        warming_up: dict[str, Any] | None
        if isinstance(self.warming_up, JobWarmingUp):
            warming_up = self.warming_up.to_dict()
        else:
            warming_up = self.warming_up

        favourite = self.favourite

        created_at = self.created_at.isoformat()

        queued_at: None | str
        if isinstance(self.queued_at, datetime.datetime):
            queued_at = self.queued_at.isoformat()
        else:
            queued_at = self.queued_at

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        completed_at: None | str
        if isinstance(self.completed_at, datetime.datetime):
            completed_at = self.completed_at.isoformat()
        else:
            completed_at = self.completed_at

        options = self.options.to_dict()

        source = self.source.to_dict()

        target = self.target.to_dict()

        result_url: None | str
        result_url = self.result_url

        result: dict[str, Any] | None
        if isinstance(self.result, JobResult):
            result = self.result.to_dict()
        else:
            result = self.result

        error: dict[str, Any] | None
        if isinstance(self.error, JobError):
            error = self.error.to_dict()
        else:
            error = self.error

        moderation = self.moderation.to_dict()

        metrics = self.metrics.to_dict()

        engine: dict[str, Any] | None
        if isinstance(self.engine, JobEngine):
            engine = self.engine.to_dict()
        else:
            engine = self.engine

        provenance: dict[str, Any] | None
        if isinstance(self.provenance, JobProvenance):
            provenance = self.provenance.to_dict()
        else:
            provenance = self.provenance

        consent: dict[str, Any] | None
        if isinstance(self.consent, JobConsent):
            consent = self.consent.to_dict()
        else:
            consent = self.consent

        quote: dict[str, Any] | None
        if isinstance(self.quote, JobQuote):
            quote = self.quote.to_dict()
        else:
            quote = self.quote

        cost: dict[str, Any] | None
        if isinstance(self.cost, JobCost):
            cost = self.cost.to_dict()
        else:
            cost = self.cost

        credits_ = self.credits_

        media_deleted = self.media_deleted

        share: dict[str, Any] | None
        if isinstance(self.share, JobShare):
            share = self.share.to_dict()
        else:
            share = self.share

        urls = self.urls.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "state": state,
            "terminal": terminal,
            "progress": progress,
            "queue": queue,
            "warming_up": warming_up,
            "favourite": favourite,
            "created_at": created_at,
            "queued_at": queued_at,
            "started_at": started_at,
            "completed_at": completed_at,
            "options": options,
            "source": source,
            "target": target,
            "result_url": result_url,
            "result": result,
            "error": error,
            "moderation": moderation,
            "metrics": metrics,
            "engine": engine,
            "provenance": provenance,
            "consent": consent,
            "quote": quote,
            "cost": cost,
            "credits": credits_,
            "media_deleted": media_deleted,
            "share": share,
            "urls": urls,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_consent import JobConsent # noqa: PLC0415
        from ..models.job_cost import JobCost # noqa: PLC0415
        from ..models.job_engine import JobEngine # noqa: PLC0415
        from ..models.job_error import JobError # noqa: PLC0415
        from ..models.job_metrics import JobMetrics # noqa: PLC0415
        from ..models.job_moderation import JobModeration # noqa: PLC0415
        from ..models.job_options import JobOptions # noqa: PLC0415
        from ..models.job_provenance import JobProvenance # noqa: PLC0415
        from ..models.job_queue import JobQueue # noqa: PLC0415
        from ..models.job_quote import JobQuote # noqa: PLC0415
        from ..models.job_result import JobResult # noqa: PLC0415
        from ..models.job_share import JobShare # noqa: PLC0415
        from ..models.job_source import JobSource # noqa: PLC0415
        from ..models.job_target import JobTarget # noqa: PLC0415
        from ..models.job_urls import JobUrls # noqa: PLC0415
        from ..models.job_warming_up import JobWarmingUp # noqa: PLC0415
        d = dict(src_dict)
        id = UUID(d.pop("id"))




        state = JobStateEnum(d.pop("state"))




        terminal = d.pop("terminal")

        progress = d.pop("progress")

        def _parse_queue(data: object) -> JobQueue | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                queue_type_1 = JobQueue.from_dict(data)



                return queue_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobQueue | None, data)

        queue = _parse_queue(d.pop("queue"))


        def _parse_warming_up(data: object) -> JobWarmingUp | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                warming_up_type_1 = JobWarmingUp.from_dict(data)



                return warming_up_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobWarmingUp | None, data)

        warming_up = _parse_warming_up(d.pop("warming_up"))


        favourite = d.pop("favourite")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        def _parse_queued_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                queued_at_type_0 = datetime.datetime.fromisoformat(data)



                return queued_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        queued_at = _parse_queued_at(d.pop("queued_at"))


        def _parse_started_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)



                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        started_at = _parse_started_at(d.pop("started_at"))


        def _parse_completed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                completed_at_type_0 = datetime.datetime.fromisoformat(data)



                return completed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        completed_at = _parse_completed_at(d.pop("completed_at"))


        options = JobOptions.from_dict(d.pop("options"))




        source = JobSource.from_dict(d.pop("source"))




        target = JobTarget.from_dict(d.pop("target"))




        def _parse_result_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        result_url = _parse_result_url(d.pop("result_url"))


        def _parse_result(data: object) -> JobResult | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                result_type_1 = JobResult.from_dict(data)



                return result_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobResult | None, data)

        result = _parse_result(d.pop("result"))


        def _parse_error(data: object) -> JobError | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_1 = JobError.from_dict(data)



                return error_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobError | None, data)

        error = _parse_error(d.pop("error"))


        moderation = JobModeration.from_dict(d.pop("moderation"))




        metrics = JobMetrics.from_dict(d.pop("metrics"))




        def _parse_engine(data: object) -> JobEngine | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                engine_type_1 = JobEngine.from_dict(data)



                return engine_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobEngine | None, data)

        engine = _parse_engine(d.pop("engine"))


        def _parse_provenance(data: object) -> JobProvenance | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                provenance_type_1 = JobProvenance.from_dict(data)



                return provenance_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobProvenance | None, data)

        provenance = _parse_provenance(d.pop("provenance"))


        def _parse_consent(data: object) -> JobConsent | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                consent_type_1 = JobConsent.from_dict(data)



                return consent_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobConsent | None, data)

        consent = _parse_consent(d.pop("consent"))


        def _parse_quote(data: object) -> JobQuote | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                quote_type_1 = JobQuote.from_dict(data)



                return quote_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobQuote | None, data)

        quote = _parse_quote(d.pop("quote"))


        def _parse_cost(data: object) -> JobCost | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                cost_type_1 = JobCost.from_dict(data)



                return cost_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobCost | None, data)

        cost = _parse_cost(d.pop("cost"))


        credits_ = d.pop("credits")

        media_deleted = d.pop("media_deleted")

        def _parse_share(data: object) -> JobShare | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                share_type_1 = JobShare.from_dict(data)



                return share_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobShare | None, data)

        share = _parse_share(d.pop("share"))


        urls = JobUrls.from_dict(d.pop("urls"))




        job = cls(
            id=id,
            state=state,
            terminal=terminal,
            progress=progress,
            queue=queue,
            warming_up=warming_up,
            favourite=favourite,
            created_at=created_at,
            queued_at=queued_at,
            started_at=started_at,
            completed_at=completed_at,
            options=options,
            source=source,
            target=target,
            result_url=result_url,
            result=result,
            error=error,
            moderation=moderation,
            metrics=metrics,
            engine=engine,
            provenance=provenance,
            consent=consent,
            quote=quote,
            cost=cost,
            credits_=credits_,
            media_deleted=media_deleted,
            share=share,
            urls=urls,
        )

        return job

