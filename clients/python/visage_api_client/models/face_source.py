from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="FaceSource")



@_attrs_define
class FaceSource:
    """ 
        Attributes:
            face (int): Target face, largest first.
            source (int): Source photo, in upload order.
     """

    face: int
    source: int





    def to_dict(self) -> dict[str, Any]:
        face = self.face

        source = self.source


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "face": face,
            "source": source,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        face = d.pop("face")

        source = d.pop("source")

        face_source = cls(
            face=face,
            source=source,
        )

        return face_source

