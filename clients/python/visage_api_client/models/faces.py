from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.face_box import FaceBox





T = TypeVar("T", bound="Faces")



@_attrs_define
class Faces:
    """ 
        Attributes:
            width (int):
            height (int):
            min_face_px (int): A source face smaller than this is refused at screening.
            faces (list[FaceBox]):
     """

    width: int
    height: int
    min_face_px: int
    faces: list[FaceBox]





    def to_dict(self) -> dict[str, Any]:
        from ..models.face_box import FaceBox # noqa: PLC0415
        width = self.width

        height = self.height

        min_face_px = self.min_face_px

        faces = []
        for faces_item_data in self.faces:
            faces_item = faces_item_data.to_dict()
            faces.append(faces_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "width": width,
            "height": height,
            "min_face_px": min_face_px,
            "faces": faces,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.face_box import FaceBox # noqa: PLC0415
        d = dict(src_dict)
        width = d.pop("width")

        height = d.pop("height")

        min_face_px = d.pop("min_face_px")

        faces = []
        _faces = d.pop("faces")
        for faces_item_data in (_faces):
            faces_item = FaceBox.from_dict(faces_item_data)



            faces.append(faces_item)


        faces = cls(
            width=width,
            height=height,
            min_face_px=min_face_px,
            faces=faces,
        )

        return faces

