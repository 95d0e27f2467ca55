from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field
import json
from .. import types

from ..types import UNSET, Unset

from ..models.media_kind_enum import MediaKindEnum
from ..models.mode_enum import ModeEnum
from ..models.resolution_enum import ResolutionEnum
from ..types import File, FileTypes
from ..types import UNSET, Unset
from io import BytesIO






T = TypeVar("T", bound="QuoteRequestRequest")



@_attrs_define
class QuoteRequestRequest:
    """ 
        Attributes:
            mode (ModeEnum): * `fast` - Fast
                * `standard` - Standard
                * `hq` - High quality
            resolution (ResolutionEnum): * `720p` - 720p
                * `1080p` - 1080p
                * `original` - Original
            target (File | Unset): The target photo or video itself (multipart); or send its size.
            width (int | Unset): Target width in pixels.
            height (int | Unset): Target height in pixels.
            frames (int | Unset): 1 for a photo; a video's frame count. Default: 1.
            kind (MediaKindEnum | Unset): * `image` - Photo
                * `video` - Video
     """

    mode: ModeEnum
    resolution: ResolutionEnum
    target: File | Unset = UNSET
    width: int | Unset = UNSET
    height: int | Unset = UNSET
    frames: int | Unset = 1
    kind: MediaKindEnum | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        mode = self.mode.value

        resolution = self.resolution.value

        target: FileTypes | Unset = UNSET
        if not isinstance(self.target, Unset):
            target = self.target.to_tuple()


        width = self.width

        height = self.height

        frames = self.frames

        kind: str | Unset = UNSET
        if not isinstance(self.kind, Unset):
            kind = self.kind.value



        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "mode": mode,
            "resolution": resolution,
        })
        if target is not UNSET:
            field_dict["target"] = target
        if width is not UNSET:
            field_dict["width"] = width
        if height is not UNSET:
            field_dict["height"] = height
        if frames is not UNSET:
            field_dict["frames"] = frames
        if kind is not UNSET:
            field_dict["kind"] = kind

        return field_dict


    def to_multipart(self) -> types.RequestFiles:
        files: types.RequestFiles = []

        files.append(("mode",  (None, str(self.mode.value).encode(), "text/plain")))



        files.append(("resolution",  (None, str(self.resolution.value).encode(), "text/plain")))



        if not isinstance(self.target, Unset):
            files.append(("target", self.target.to_tuple()))



        if not isinstance(self.width, Unset):
            files.append(("width", (None, str(self.width).encode(), "text/plain")))



        if not isinstance(self.height, Unset):
            files.append(("height", (None, str(self.height).encode(), "text/plain")))



        if not isinstance(self.frames, Unset):
            files.append(("frames", (None, str(self.frames).encode(), "text/plain")))



        if not isinstance(self.kind, Unset):
            files.append(("kind",  (None, str(self.kind.value).encode(), "text/plain")))




        for prop_name, prop in self.additional_properties.items():
            files.append((prop_name, (None, str(prop).encode(), "text/plain")))



        return files


    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        mode = ModeEnum(d.pop("mode"))




        resolution = ResolutionEnum(d.pop("resolution"))




        _target = d.pop("target", UNSET)
        target: File | Unset
        if isinstance(_target,  Unset):
            target = UNSET
        else:
            target = File(
             payload = BytesIO(_target)
        )




        width = d.pop("width", UNSET)

        height = d.pop("height", UNSET)

        frames = d.pop("frames", UNSET)

        _kind = d.pop("kind", UNSET)
        kind: MediaKindEnum | Unset
        if isinstance(_kind,  Unset):
            kind = UNSET
        else:
            kind = MediaKindEnum(_kind)




        quote_request_request = cls(
            mode=mode,
            resolution=resolution,
            target=target,
            width=width,
            height=height,
            frames=frames,
            kind=kind,
        )


        quote_request_request.additional_properties = d
        return quote_request_request

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
