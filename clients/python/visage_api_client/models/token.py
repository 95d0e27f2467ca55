from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.token_device import TokenDevice





T = TypeVar("T", bound="Token")



@_attrs_define
class Token:
    """ 
        Attributes:
            token (str | Unset): Without device_name: send as 'Authorization: Bearer <token>'. Shown once.
            name (str | Unset):
            prefix (str | Unset):
            access_token (str | Unset): With device_name: the bearer token.
            refresh_token (str | Unset): Exchange once at /api/v1/auth/refresh.
            expires_in (int | Unset): The access token's lifetime in seconds.
            device (TokenDevice | Unset):
     """

    token: str | Unset = UNSET
    name: str | Unset = UNSET
    prefix: str | Unset = UNSET
    access_token: str | Unset = UNSET
    refresh_token: str | Unset = UNSET
    expires_in: int | Unset = UNSET
    device: TokenDevice | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.token_device import TokenDevice # noqa: PLC0415
        token = self.token

        name = self.name

        prefix = self.prefix

        access_token = self.access_token

        refresh_token = self.refresh_token

        expires_in = self.expires_in

        device: dict[str, Any] | Unset = UNSET
        if not isinstance(self.device, Unset):
            device = self.device.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if token is not UNSET:
            field_dict["token"] = token
        if name is not UNSET:
            field_dict["name"] = name
        if prefix is not UNSET:
            field_dict["prefix"] = prefix
        if access_token is not UNSET:
            field_dict["access_token"] = access_token
        if refresh_token is not UNSET:
            field_dict["refresh_token"] = refresh_token
        if expires_in is not UNSET:
            field_dict["expires_in"] = expires_in
        if device is not UNSET:
            field_dict["device"] = device

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.token_device import TokenDevice # noqa: PLC0415
        d = dict(src_dict)
        token = d.pop("token", UNSET)

        name = d.pop("name", UNSET)

        prefix = d.pop("prefix", UNSET)

        access_token = d.pop("access_token", UNSET)

        refresh_token = d.pop("refresh_token", UNSET)

        expires_in = d.pop("expires_in", UNSET)

        _device = d.pop("device", UNSET)
        device: TokenDevice | Unset
        if isinstance(_device,  Unset):
            device = UNSET
        else:
            device = TokenDevice.from_dict(_device)




        token = cls(
            token=token,
            name=name,
            prefix=prefix,
            access_token=access_token,
            refresh_token=refresh_token,
            expires_in=expires_in,
            device=device,
        )

        return token

