from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.moderation_state_enum import ModerationStateEnum
from typing import cast






T = TypeVar("T", bound="JobModeration")



@_attrs_define
class JobModeration:
    """ 
        Attributes:
            state (ModerationStateEnum): * `pending` - pending
                * `in_review` - in_review
                * `rejected` - rejected
                * `passed` - passed
                * `not_screened` - not_screened
            message (None | str): Why it is in review (in_review only).
     """

    state: ModerationStateEnum
    message: None | str





    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        message: None | str
        message = self.message


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "state": state,
            "message": message,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = ModerationStateEnum(d.pop("state"))




        def _parse_message(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        message = _parse_message(d.pop("message"))


        job_moderation = cls(
            state=state,
            message=message,
        )

        return job_moderation

