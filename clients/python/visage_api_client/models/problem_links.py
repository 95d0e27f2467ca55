from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="ProblemLinks")



@_attrs_define
class ProblemLinks:
    """ 
        Attributes:
            top_up (str):
     """

    top_up: str





    def to_dict(self) -> dict[str, Any]:
        top_up = self.top_up


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "top_up": top_up,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        top_up = d.pop("top_up")

        problem_links = cls(
            top_up=top_up,
        )

        return problem_links

