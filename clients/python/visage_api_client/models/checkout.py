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
            id (str): The purchase's reference (Stripe session id, or out_trade_no).
            provider (str):
            url (str): Send the buyer here to pay (Stripe, Alipay page pay); else empty.
            code_url (str): WeChat Pay Native: show as a QR code to scan; else empty.
            order_string (str): Alipay app pay: pass to the Alipay SDK; else empty.
     """

    id: str
    provider: str
    url: str
    code_url: str
    order_string: str





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        provider = self.provider

        url = self.url

        code_url = self.code_url

        order_string = self.order_string


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "provider": provider,
            "url": url,
            "code_url": code_url,
            "order_string": order_string,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        provider = d.pop("provider")

        url = d.pop("url")

        code_url = d.pop("code_url")

        order_string = d.pop("order_string")

        checkout = cls(
            id=id,
            provider=provider,
            url=url,
            code_url=code_url,
            order_string=order_string,
        )

        return checkout

