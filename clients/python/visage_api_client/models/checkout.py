from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Checkout")



@_attrs_define
class Checkout:
    """ 
        Attributes:
            id (str): The Stripe Checkout Session id.
            url (str): Send the buyer here to pay.
     """

    id: str
    url: str





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        url = self.url


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "url": url,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        url = d.pop("url")

        checkout = cls(
            id=id,
            url=url,
        )

        return checkout

