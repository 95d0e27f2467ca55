from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="FaceBox")



@_attrs_define
class FaceBox:
    """ 
        Attributes:
            index (int): The face_index to send.
            box (list[float]): [x1, y1, x2, y2] in image pixels.
            score (float):
     """

    index: int
    box: list[float]
    score: float





    def to_dict(self) -> dict[str, Any]:
        index = self.index

        box = self.box



        score = self.score


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "index": index,
            "box": box,
            "score": score,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        index = d.pop("index")

        box = cast(list[float], d.pop("box"))


        score = d.pop("score")

        face_box = cls(
            index=index,
            box=box,
            score=score,
        )

        return face_box

