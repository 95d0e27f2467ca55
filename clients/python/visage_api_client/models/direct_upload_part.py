from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="DirectUploadPart")



@_attrs_define
class DirectUploadPart:
    """ 
        Attributes:
            part_number (int):
            size_bytes (int):
            url (str): A presigned PUT: send the part's bytes as the body and nothing else
     """

    part_number: int
    size_bytes: int
    url: str





    def to_dict(self) -> dict[str, Any]:
        part_number = self.part_number

        size_bytes = self.size_bytes

        url = self.url


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "part_number": part_number,
            "size_bytes": size_bytes,
            "url": url,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        part_number = d.pop("part_number")

        size_bytes = d.pop("size_bytes")

        url = d.pop("url")

        direct_upload_part = cls(
            part_number=part_number,
            size_bytes=size_bytes,
            url=url,
        )

        return direct_upload_part

