from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="JobSource")



@_attrs_define
class JobSource:
    """ 
        Attributes:
            media_type (str): Sniffed from the content, e.g. image/png.
            width (int):
            height (int):
            photos (int): How many source photos were sent.
     """

    media_type: str
    width: int
    height: int
    photos: int





    def to_dict(self) -> dict[str, Any]:
        media_type = self.media_type

        width = self.width

        height = self.height

        photos = self.photos


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "media_type": media_type,
            "width": width,
            "height": height,
            "photos": photos,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        media_type = d.pop("media_type")

        width = d.pop("width")

        height = d.pop("height")

        photos = d.pop("photos")

        job_source = cls(
            media_type=media_type,
            width=width,
            height=height,
            photos=photos,
        )

        return job_source

