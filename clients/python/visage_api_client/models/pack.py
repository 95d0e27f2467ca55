from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Pack")



@_attrs_define
class Pack:
    """ 
        Attributes:
            id (int):
            name (str):
            credits_ (str):
            price (str):
            price_minor (int): The price in the currency's minor unit as the payment providers count it (cents; whole yen
                for JPY).
            currency (str):
     """

    id: int
    name: str
    credits_: str
    price: str
    price_minor: int
    currency: str





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        name = self.name

        credits_ = self.credits_

        price = self.price

        price_minor = self.price_minor

        currency = self.currency


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "name": name,
            "credits": credits_,
            "price": price,
            "price_minor": price_minor,
            "currency": currency,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        name = d.pop("name")

        credits_ = d.pop("credits")

        price = d.pop("price")

        price_minor = d.pop("price_minor")

        currency = d.pop("currency")

        pack = cls(
            id=id,
            name=name,
            credits_=credits_,
            price=price,
            price_minor=price_minor,
            currency=currency,
        )

        return pack

