from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Token")



@_attrs_define
class Token:
    """ 
        Attributes:
            token (str): Send as 'Authorization: Bearer <token>'. Shown once.
            name (str):
            prefix (str):
     """

    token: str
    name: str
    prefix: str





    def to_dict(self) -> dict[str, Any]:
        token = self.token

        name = self.name

        prefix = self.prefix


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "token": token,
            "name": name,
            "prefix": prefix,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        token = d.pop("token")

        name = d.pop("name")

        prefix = d.pop("prefix")

        token = cls(
            token=token,
            name=name,
            prefix=prefix,
        )

        return token

