from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.faces_enum import FacesEnum
from ..models.mode_enum import ModeEnum
from ..models.resolution_enum import ResolutionEnum
from typing import cast

if TYPE_CHECKING:
  from ..models.face_source import FaceSource





T = TypeVar("T", bound="JobOptions")



@_attrs_define
class JobOptions:
    """ 
        Attributes:
            mode (ModeEnum): * `fast` - Fast
                * `standard` - Standard
                * `hq` - High quality
            resolution (ResolutionEnum): * `720p` - 720p
                * `1080p` - 1080p
                * `original` - Original
            faces (FacesEnum): * `one` - The largest face
                * `many` - Every face
                * `reference` - Faces like the reference face
            face_index (int | None):
            reference_face_index (int | None):
            face_sources (list[FaceSource] | None):
            webhook_url (None | str):
     """

    mode: ModeEnum
    resolution: ResolutionEnum
    faces: FacesEnum
    face_index: int | None
    reference_face_index: int | None
    face_sources: list[FaceSource] | None
    webhook_url: None | str





    def to_dict(self) -> dict[str, Any]:
        from ..models.face_source import FaceSource # noqa: PLC0415
        mode = self.mode.value

        resolution = self.resolution.value

        faces = self.faces.value

        face_index: int | None
        face_index = self.face_index

        reference_face_index: int | None
        reference_face_index = self.reference_face_index

        face_sources: list[dict[str, Any]] | None
        if isinstance(self.face_sources, list):
            face_sources = []
            for face_sources_type_0_item_data in self.face_sources:
                face_sources_type_0_item = face_sources_type_0_item_data.to_dict()
                face_sources.append(face_sources_type_0_item)


        else:
            face_sources = self.face_sources

        webhook_url: None | str
        webhook_url = self.webhook_url


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "mode": mode,
            "resolution": resolution,
            "faces": faces,
            "face_index": face_index,
            "reference_face_index": reference_face_index,
            "face_sources": face_sources,
            "webhook_url": webhook_url,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.face_source import FaceSource # noqa: PLC0415
        d = dict(src_dict)
        mode = ModeEnum(d.pop("mode"))




        resolution = ResolutionEnum(d.pop("resolution"))




        faces = FacesEnum(d.pop("faces"))




        def _parse_face_index(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        face_index = _parse_face_index(d.pop("face_index"))


        def _parse_reference_face_index(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        reference_face_index = _parse_reference_face_index(d.pop("reference_face_index"))


        def _parse_face_sources(data: object) -> list[FaceSource] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                face_sources_type_0 = []
                _face_sources_type_0 = data
                for face_sources_type_0_item_data in (_face_sources_type_0):
                    face_sources_type_0_item = FaceSource.from_dict(face_sources_type_0_item_data)



                    face_sources_type_0.append(face_sources_type_0_item)

                return face_sources_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[FaceSource] | None, data)

        face_sources = _parse_face_sources(d.pop("face_sources"))


        def _parse_webhook_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        webhook_url = _parse_webhook_url(d.pop("webhook_url"))


        job_options = cls(
            mode=mode,
            resolution=resolution,
            faces=faces,
            face_index=face_index,
            reference_face_index=reference_face_index,
            face_sources=face_sources,
            webhook_url=webhook_url,
        )

        return job_options

