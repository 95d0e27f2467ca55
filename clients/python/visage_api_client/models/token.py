from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.token_type_enum import TokenTypeEnum
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.signed_in_device import SignedInDevice





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
            token_type (TokenTypeEnum | Unset): * `Bearer` - Bearer
            expires_in (int | Unset): The access token's lifetime in seconds.
            refresh_expires_in (int | Unset): The refresh token's lifetime in seconds.
            device (SignedInDevice | Unset):
     """

    token: str | Unset = UNSET
    name: str | Unset = UNSET
    prefix: str | Unset = UNSET
    access_token: str | Unset = UNSET
    refresh_token: str | Unset = UNSET
    token_type: TokenTypeEnum | Unset = UNSET
    expires_in: int | Unset = UNSET
    refresh_expires_in: int | Unset = UNSET
    device: SignedInDevice | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.signed_in_device import SignedInDevice # noqa: PLC0415
        token = self.token

        name = self.name

        prefix = self.prefix

        access_token = self.access_token

        refresh_token = self.refresh_token

        token_type: str | Unset = UNSET
        if not isinstance(self.token_type, Unset):
            token_type = self.token_type.value


        expires_in = self.expires_in

        refresh_expires_in = self.refresh_expires_in

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
        if token_type is not UNSET:
            field_dict["token_type"] = token_type
        if expires_in is not UNSET:
            field_dict["expires_in"] = expires_in
        if refresh_expires_in is not UNSET:
            field_dict["refresh_expires_in"] = refresh_expires_in
        if device is not UNSET:
            field_dict["device"] = device

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.signed_in_device import SignedInDevice # noqa: PLC0415
        d = dict(src_dict)
        token = d.pop("token", UNSET)

        name = d.pop("name", UNSET)

        prefix = d.pop("prefix", UNSET)

        access_token = d.pop("access_token", UNSET)

        refresh_token = d.pop("refresh_token", UNSET)

        _token_type = d.pop("token_type", UNSET)
        token_type: TokenTypeEnum | Unset
        if isinstance(_token_type,  Unset):
            token_type = UNSET
        else:
            token_type = TokenTypeEnum(_token_type)




        expires_in = d.pop("expires_in", UNSET)

        refresh_expires_in = d.pop("refresh_expires_in", UNSET)

        _device = d.pop("device", UNSET)
        device: SignedInDevice | Unset
        if isinstance(_device,  Unset):
            device = UNSET
        else:
            device = SignedInDevice.from_dict(_device)




        token = cls(
            token=token,
            name=name,
            prefix=prefix,
            access_token=access_token,
            refresh_token=refresh_token,
            token_type=token_type,
            expires_in=expires_in,
            refresh_expires_in=refresh_expires_in,
            device=device,
        )

        return token

