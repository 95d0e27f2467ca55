from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.media_kind_enum import MediaKindEnum
from typing import cast






T = TypeVar("T", bound="JobTarget")



@_attrs_define
class JobTarget:
    """ 
        Attributes:
            media_type (str):
            kind (MediaKindEnum): * `image` - Photo
                * `video` - Video
            width (int):
            height (int):
            frames (int):
            fps (float | None):
            duration_seconds (float | None):
            has_audio (bool):
            name (None | str): The uploaded file's name; null for older jobs.
     """

    media_type: str
    kind: MediaKindEnum
    width: int
    height: int
    frames: int
    fps: float | None
    duration_seconds: float | None
    has_audio: bool
    name: None | str





    def to_dict(self) -> dict[str, Any]:
        media_type = self.media_type

        kind = self.kind.value

        width = self.width

        height = self.height

        frames = self.frames

        fps: float | None
        fps = self.fps

        duration_seconds: float | None
        duration_seconds = self.duration_seconds

        has_audio = self.has_audio

        name: None | str
        name = self.name


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "media_type": media_type,
            "kind": kind,
            "width": width,
            "height": height,
            "frames": frames,
            "fps": fps,
            "duration_seconds": duration_seconds,
            "has_audio": has_audio,
            "name": name,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        media_type = d.pop("media_type")

        kind = MediaKindEnum(d.pop("kind"))




        width = d.pop("width")

        height = d.pop("height")

        frames = d.pop("frames")

        def _parse_fps(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        fps = _parse_fps(d.pop("fps"))


        def _parse_duration_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        duration_seconds = _parse_duration_seconds(d.pop("duration_seconds"))


        has_audio = d.pop("has_audio")

        def _parse_name(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        name = _parse_name(d.pop("name"))


        job_target = cls(
            media_type=media_type,
            kind=kind,
            width=width,
            height=height,
            frames=frames,
            fps=fps,
            duration_seconds=duration_seconds,
            has_audio=has_audio,
            name=name,
        )

        return job_target

