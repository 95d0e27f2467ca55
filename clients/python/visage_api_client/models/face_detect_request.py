from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field
import json
from .. import types

from ..types import UNSET, Unset

from ..models.field_enum import FieldEnum
from ..types import File, FileTypes
from ..types import UNSET, Unset
from io import BytesIO






T = TypeVar("T", bound="FaceDetectRequest")



@_attrs_define
class FaceDetectRequest:
    """ 
        Attributes:
            image (File): The photo to look for faces in (JPEG, PNG, WebP, HEIC or AVIF)
            field (FieldEnum | Unset): * `source` - source
                * `target` - target
     """

    image: File
    field: FieldEnum | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        image = self.image.to_tuple()


        field: str | Unset = UNSET
        if not isinstance(self.field, Unset):
            field = self.field.value



        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "image": image,
        })
        if field is not UNSET:
            field_dict["field"] = field

        return field_dict


    def to_multipart(self) -> types.RequestFiles:
        files: types.RequestFiles = []

        files.append(("image", self.image.to_tuple()))



        if not isinstance(self.field, Unset):
            files.append(("field",  (None, str(self.field.value).encode(), "text/plain")))




        for prop_name, prop in self.additional_properties.items():
            files.append((prop_name, (None, str(prop).encode(), "text/plain")))



        return files


    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        image = File(
             payload = BytesIO(d.pop("image"))
        )




        _field = d.pop("field", UNSET)
        field: FieldEnum | Unset
        if isinstance(_field,  Unset):
            field = UNSET
        else:
            field = FieldEnum(_field)




        face_detect_request = cls(
            image=image,
            field=field,
        )


        face_detect_request.additional_properties = d
        return face_detect_request

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
