from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.client_enum import ClientEnum
from ..types import UNSET, Unset






T = TypeVar("T", bound="TokenCreateRequest")



@_attrs_define
class TokenCreateRequest:
    """ 
        Attributes:
            username (str):
            password (str):
            name (str | Unset):  Default: 'API token'.
            device_name (str | Unset): For apps: sign this device in. The answer is a short-lived access token and a refresh
                token (rotated on every refresh) instead of a long-lived API token.
            client (ClientEnum | Unset): * `mobile` - mobile
                * `web` - web Default: ClientEnum.MOBILE.
     """

    username: str
    password: str
    name: str | Unset = 'API token'
    device_name: str | Unset = UNSET
    client: ClientEnum | Unset = ClientEnum.MOBILE
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        username = self.username

        password = self.password

        name = self.name

        device_name = self.device_name

        client: str | Unset = UNSET
        if not isinstance(self.client, Unset):
            client = self.client.value



        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "username": username,
            "password": password,
        })
        if name is not UNSET:
            field_dict["name"] = name
        if device_name is not UNSET:
            field_dict["device_name"] = device_name
        if client is not UNSET:
            field_dict["client"] = client

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        username = d.pop("username")

        password = d.pop("password")

        name = d.pop("name", UNSET)

        device_name = d.pop("device_name", UNSET)

        _client = d.pop("client", UNSET)
        client: ClientEnum | Unset
        if isinstance(_client,  Unset):
            client = UNSET
        else:
            client = ClientEnum(_client)




        token_create_request = cls(
            username=username,
            password=password,
            name=name,
            device_name=device_name,
            client=client,
        )


        token_create_request.additional_properties = d
        return token_create_request

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
