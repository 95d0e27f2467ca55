from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="JobWarmingUp")



@_attrs_define
class JobWarmingUp:
    """ 
        Attributes:
            ready_in_seconds (int | None): Rough wait before they take jobs; null: any moment now.
     """

    ready_in_seconds: int | None





    def to_dict(self) -> dict[str, Any]:
        ready_in_seconds: int | None
        ready_in_seconds = self.ready_in_seconds


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "ready_in_seconds": ready_in_seconds,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_ready_in_seconds(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        ready_in_seconds = _parse_ready_in_seconds(d.pop("ready_in_seconds"))


        job_warming_up = cls(
            ready_in_seconds=ready_in_seconds,
        )

        return job_warming_up

