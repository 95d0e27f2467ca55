from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="JobQueue")



@_attrs_define
class JobQueue:
    """ 
        Attributes:
            position (int): 1: next to start.
            start_seconds (int): Rough wait before it starts.
            eta_seconds (int): Rough wait before it is done.
     """

    position: int
    start_seconds: int
    eta_seconds: int





    def to_dict(self) -> dict[str, Any]:
        position = self.position

        start_seconds = self.start_seconds

        eta_seconds = self.eta_seconds


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "position": position,
            "start_seconds": start_seconds,
            "eta_seconds": eta_seconds,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        position = d.pop("position")

        start_seconds = d.pop("start_seconds")

        eta_seconds = d.pop("eta_seconds")

        job_queue = cls(
            position=position,
            start_seconds=start_seconds,
            eta_seconds=eta_seconds,
        )

        return job_queue

