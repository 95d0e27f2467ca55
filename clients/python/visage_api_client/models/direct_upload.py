from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.direct_upload_links import DirectUploadLinks
  from ..models.direct_upload_media import DirectUploadMedia
  from ..models.direct_upload_part import DirectUploadPart
  from ..models.direct_upload_part_received import DirectUploadPartReceived





T = TypeVar("T", bound="DirectUpload")



@_attrs_define
class DirectUpload:
    """ 
        Attributes:
            id (UUID):
            state (str): pending, ready (complete and valid: a job may use it), used, rejected or expired
            kind (str):
            size_bytes (int):
            part_size_bytes (int):
            parts (list[DirectUploadPart]): Every part: part_number, size_bytes, url (a presigned PUT; send the part's bytes
                as the body and nothing else). Fresh URLs on every GET. Empty once the upload is no longer pending.
            parts_received (list[DirectUploadPartReceived]): The parts S3 already holds (part_number, size_bytes, etag):
                after a drop, send only the others.
            media (DirectUploadMedia): What validation found, once ready (media_type, width, height, frames, …)
            expires_at (datetime.datetime): Unfinished or unused after this, it is deleted (never billed)
            urls (DirectUploadLinks):
     """

    id: UUID
    state: str
    kind: str
    size_bytes: int
    part_size_bytes: int
    parts: list[DirectUploadPart]
    parts_received: list[DirectUploadPartReceived]
    media: DirectUploadMedia
    expires_at: datetime.datetime
    urls: DirectUploadLinks





    def to_dict(self) -> dict[str, Any]:
        from ..models.direct_upload_links import DirectUploadLinks # noqa: PLC0415
        from ..models.direct_upload_media import DirectUploadMedia # noqa: PLC0415
        from ..models.direct_upload_part import DirectUploadPart # noqa: PLC0415
        from ..models.direct_upload_part_received import DirectUploadPartReceived # noqa: PLC0415
        id = str(self.id)

        state = self.state

        kind = self.kind

        size_bytes = self.size_bytes

        part_size_bytes = self.part_size_bytes

        parts = []
        for parts_item_data in self.parts:
            parts_item = parts_item_data.to_dict()
            parts.append(parts_item)



        parts_received = []
        for parts_received_item_data in self.parts_received:
            parts_received_item = parts_received_item_data.to_dict()
            parts_received.append(parts_received_item)



        media = self.media.to_dict()

        expires_at = self.expires_at.isoformat()

        urls = self.urls.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "state": state,
            "kind": kind,
            "size_bytes": size_bytes,
            "part_size_bytes": part_size_bytes,
            "parts": parts,
            "parts_received": parts_received,
            "media": media,
            "expires_at": expires_at,
            "urls": urls,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.direct_upload_links import DirectUploadLinks # noqa: PLC0415
        from ..models.direct_upload_media import DirectUploadMedia # noqa: PLC0415
        from ..models.direct_upload_part import DirectUploadPart # noqa: PLC0415
        from ..models.direct_upload_part_received import DirectUploadPartReceived # noqa: PLC0415
        d = dict(src_dict)
        id = UUID(d.pop("id"))




        state = d.pop("state")

        kind = d.pop("kind")

        size_bytes = d.pop("size_bytes")

        part_size_bytes = d.pop("part_size_bytes")

        parts = []
        _parts = d.pop("parts")
        for parts_item_data in (_parts):
            parts_item = DirectUploadPart.from_dict(parts_item_data)



            parts.append(parts_item)


        parts_received = []
        _parts_received = d.pop("parts_received")
        for parts_received_item_data in (_parts_received):
            parts_received_item = DirectUploadPartReceived.from_dict(parts_received_item_data)



            parts_received.append(parts_received_item)


        media = DirectUploadMedia.from_dict(d.pop("media"))




        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))




        urls = DirectUploadLinks.from_dict(d.pop("urls"))




        direct_upload = cls(
            id=id,
            state=state,
            kind=kind,
            size_bytes=size_bytes,
            part_size_bytes=part_size_bytes,
            parts=parts,
            parts_received=parts_received,
            media=media,
            expires_at=expires_at,
            urls=urls,
        )

        return direct_upload

