from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="DirectUploadLinks")



@_attrs_define
class DirectUploadLinks:
    """ 
        Attributes:
            self_ (str):
            complete (str):
     """

    self_: str
    complete: str





    def to_dict(self) -> dict[str, Any]:
        self_ = self.self_

        complete = self.complete


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "self": self_,
            "complete": complete,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        self_ = d.pop("self")

        complete = d.pop("complete")

        direct_upload_links = cls(
            self_=self_,
            complete=complete,
        )

        return direct_upload_links

