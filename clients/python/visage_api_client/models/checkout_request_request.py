from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.checkout_request_channel_enum import CheckoutRequestChannelEnum
from ..models.provider_enum import ProviderEnum
from ..types import UNSET, Unset






T = TypeVar("T", bound="CheckoutRequestRequest")



@_attrs_define
class CheckoutRequestRequest:
    """ 
        Attributes:
            pack_id (int):
            provider (ProviderEnum | Unset): * `stripe` - Card (Stripe)
                * `alipay` - Alipay 支付宝
                * `wechatpay` - WeChat Pay 微信支付 Default: ProviderEnum.STRIPE.
            channel (CheckoutRequestChannelEnum | Unset): * `page` - page
                * `app` - app Default: CheckoutRequestChannelEnum.PAGE.
     """

    pack_id: int
    provider: ProviderEnum | Unset = ProviderEnum.STRIPE
    channel: CheckoutRequestChannelEnum | Unset = CheckoutRequestChannelEnum.PAGE
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        pack_id = self.pack_id

        provider: str | Unset = UNSET
        if not isinstance(self.provider, Unset):
            provider = self.provider.value


        channel: str | Unset = UNSET
        if not isinstance(self.channel, Unset):
            channel = self.channel.value



        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "pack_id": pack_id,
        })
        if provider is not UNSET:
            field_dict["provider"] = provider
        if channel is not UNSET:
            field_dict["channel"] = channel

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        pack_id = d.pop("pack_id")

        _provider = d.pop("provider", UNSET)
        provider: ProviderEnum | Unset
        if isinstance(_provider,  Unset):
            provider = UNSET
        else:
            provider = ProviderEnum(_provider)




        _channel = d.pop("channel", UNSET)
        channel: CheckoutRequestChannelEnum | Unset
        if isinstance(_channel,  Unset):
            channel = UNSET
        else:
            channel = CheckoutRequestChannelEnum(_channel)




        checkout_request_request = cls(
            pack_id=pack_id,
            provider=provider,
            channel=channel,
        )


        checkout_request_request.additional_properties = d
        return checkout_request_request

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
