from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.media_kind_enum import MediaKindEnum






T = TypeVar("T", bound="QuoteTarget")



@_attrs_define
class QuoteTarget:
    """ 
        Attributes:
            width (int):
            height (int):
            frames (int):
            kind (MediaKindEnum): * `image` - Photo
                * `video` - Video
     """

    width: int
    height: int
    frames: int
    kind: MediaKindEnum





    def to_dict(self) -> dict[str, Any]:
        width = self.width

        height = self.height

        frames = self.frames

        kind = self.kind.value


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "width": width,
            "height": height,
            "frames": frames,
            "kind": kind,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        width = d.pop("width")

        height = d.pop("height")

        frames = d.pop("frames")

        kind = MediaKindEnum(d.pop("kind"))




        quote_target = cls(
            width=width,
            height=height,
            frames=frames,
            kind=kind,
        )

        return quote_target

