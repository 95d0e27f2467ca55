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






T = TypeVar("T", bound="JobEvent")



@_attrs_define
class JobEvent:
    """ The `data` of an `event: job` Server-Sent Event (`event: reset` carries `{}`: fetch your jobs again).

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
            progress (int):
            deleted (bool):
            version (int):
            terminal (bool):
            updated_at (datetime.datetime):
            url (str):
     """

    id: UUID
    state: JobStateEnum
    progress: int
    deleted: bool
    version: int
    terminal: bool
    updated_at: datetime.datetime
    url: str





    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        state = self.state.value

        progress = self.progress

        deleted = self.deleted

        version = self.version

        terminal = self.terminal

        updated_at = self.updated_at.isoformat()

        url = self.url


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "state": state,
            "progress": progress,
            "deleted": deleted,
            "version": version,
            "terminal": terminal,
            "updated_at": updated_at,
            "url": url,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))




        state = JobStateEnum(d.pop("state"))




        progress = d.pop("progress")

        deleted = d.pop("deleted")

        version = d.pop("version")

        terminal = d.pop("terminal")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))




        url = d.pop("url")

        job_event = cls(
            id=id,
            state=state,
            progress=progress,
            deleted=deleted,
            version=version,
            terminal=terminal,
            updated_at=updated_at,
            url=url,
        )

        return job_event

