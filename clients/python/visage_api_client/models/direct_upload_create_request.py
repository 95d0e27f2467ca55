from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field
import json
from .. import types

from ..types import UNSET, Unset

from ..models.direct_upload_create_kind_enum import DirectUploadCreateKindEnum






T = TypeVar("T", bound="DirectUploadCreateRequest")



@_attrs_define
class DirectUploadCreateRequest:
    """ 
        Attributes:
            kind (DirectUploadCreateKindEnum): * `image` - Image
                * `video` - Video
            size_bytes (int): The file's exact size
            content_type (str): e.g. video/mp4 (the content is sniffed anyway)
            sha256 (str): The file's SHA-256 (hex): the stored object must match it
     """

    kind: DirectUploadCreateKindEnum
    size_bytes: int
    content_type: str
    sha256: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        size_bytes = self.size_bytes

        content_type = self.content_type

        sha256 = self.sha256


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "kind": kind,
            "size_bytes": size_bytes,
            "content_type": content_type,
            "sha256": sha256,
        })

        return field_dict


    def to_multipart(self) -> types.RequestFiles:
        files: types.RequestFiles = []

        files.append(("kind",  (None, str(self.kind.value).encode(), "text/plain")))



        files.append(("size_bytes", (None, str(self.size_bytes).encode(), "text/plain")))



        files.append(("content_type", (None, str(self.content_type).encode(), "text/plain")))



        files.append(("sha256", (None, str(self.sha256).encode(), "text/plain")))




        for prop_name, prop in self.additional_properties.items():
            files.append((prop_name, (None, str(prop).encode(), "text/plain")))



        return files


    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = DirectUploadCreateKindEnum(d.pop("kind"))




        size_bytes = d.pop("size_bytes")

        content_type = d.pop("content_type")

        sha256 = d.pop("sha256")

        direct_upload_create_request = cls(
            kind=kind,
            size_bytes=size_bytes,
            content_type=content_type,
            sha256=sha256,
        )


        direct_upload_create_request.additional_properties = d
        return direct_upload_create_request

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
