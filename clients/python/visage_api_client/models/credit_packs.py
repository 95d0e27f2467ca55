from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.pack import Pack





T = TypeVar("T", bound="CreditPacks")



@_attrs_define
class CreditPacks:
    """ 
        Attributes:
            payments_enabled (bool):
            providers (list[str]): Payment providers on this server (stripe, alipay, wechatpay).
            packs (list[Pack]):
     """

    payments_enabled: bool
    providers: list[str]
    packs: list[Pack]





    def to_dict(self) -> dict[str, Any]:
        from ..models.pack import Pack # noqa: PLC0415
        payments_enabled = self.payments_enabled

        providers = self.providers



        packs = []
        for packs_item_data in self.packs:
            packs_item = packs_item_data.to_dict()
            packs.append(packs_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "payments_enabled": payments_enabled,
            "providers": providers,
            "packs": packs,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.pack import Pack # noqa: PLC0415
        d = dict(src_dict)
        payments_enabled = d.pop("payments_enabled")

        providers = cast(list[str], d.pop("providers"))


        packs = []
        _packs = d.pop("packs")
        for packs_item_data in (_packs):
            packs_item = Pack.from_dict(packs_item_data)



            packs.append(packs_item)


        credit_packs = cls(
            payments_enabled=payments_enabled,
            providers=providers,
            packs=packs,
        )

        return credit_packs

