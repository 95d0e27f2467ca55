from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="DirectUploadPartReceived")



@_attrs_define
class DirectUploadPartReceived:
    """ 
        Attributes:
            part_number (int):
            size_bytes (int):
            etag (str):
     """

    part_number: int
    size_bytes: int
    etag: str





    def to_dict(self) -> dict[str, Any]:
        part_number = self.part_number

        size_bytes = self.size_bytes

        etag = self.etag


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "part_number": part_number,
            "size_bytes": size_bytes,
            "etag": etag,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        part_number = d.pop("part_number")

        size_bytes = d.pop("size_bytes")

        etag = d.pop("etag")

        direct_upload_part_received = cls(
            part_number=part_number,
            size_bytes=size_bytes,
            etag=etag,
        )

        return direct_upload_part_received

